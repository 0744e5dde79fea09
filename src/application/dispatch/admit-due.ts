/**
 * Admitting due occurrences (docs/semantics.md#the-life-of-an-occurrence): one batch of due tasks, each
 * decided by the domain inside the store's transaction, within the owner's runs per minute: counted
 * across replicas by a store that can (PostgreSQL), on this replica otherwise (docs/security.md#quotas).
 */
import { admitTask } from "../../domain/admit-task.js";
import type {
  AdmissionClaim,
  AdmissionRate,
  AdmissionReport,
  TaskRepository,
} from "../../domain/ports/task-repository.js";
import type { Instant } from "../../domain/time.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import { AdmissionWindow } from "../policy/admission-window.js";
import { Quotas } from "../policy/quotas.js";

export interface AdmitDueDeps {
  readonly tasks: TaskRepository;
  /** Receives each task's admission and each batch. @default none */
  readonly events?: EventSink;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** What this replica admitted per owner in the last minute, shared with manual triggers. */
  readonly admissions?: AdmissionWindow;
}

export class AdmitDue {
  readonly #tasks: TaskRepository;
  readonly #events: EventSink;
  readonly #quotas: Quotas;
  readonly #admissions: AdmissionWindow;
  readonly #rate: AdmissionRate;

  constructor(deps: AdmitDueDeps) {
    this.#tasks = deps.tasks;
    this.#events = deps.events ?? NO_EVENTS;
    this.#quotas = deps.quotas ?? Quotas.UNLIMITED;
    this.#admissions = deps.admissions ?? new AdmissionWindow();
    const quotas = this.#quotas;
    this.#rate = { perMinute: (owner) => quotas.of(owner).runsPerMinute };
  }

  /**
   * Admits up to `limit` due tasks in one batch; with `claim`, a store that can claims the new runs this
   * replica may launch at once in the same transaction (docs/storage.md#fused-admit-and-claim).
   */
  async admitDue(now: Instant, limit: number, claim?: AdmissionClaim): Promise<AdmissionReport> {
    // Counted as decided; a batch the store then fails to write over-counts, never under-counts.
    const report = await this.#tasks.admitDueTasks(
      now,
      limit,
      (task, activeRuns, admitted) => {
        // A store that counts across replicas gives the count (docs/security.md#quotas); otherwise
        // this replica's window does.
        const used = admitted ?? this.#admissions.count(task.owner, now);
        const allowance = Math.max(0, this.#quotas.of(task.owner).runsPerMinute - used);
        const { admission, write, queued } = admitTask(task, activeRuns, now, undefined, allowance);
        this.#events.emit("admission:decided", { taskId: task.id, admission });
        if (admitted === undefined) this.#admissions.add(task.owner, now, queued);
        return write;
      },
      this.#rate,
      claim,
    );
    for (const task of report.defective) this.#events.emit("task:defective", { task });
    this.#events.emit("admission:batch", { tasks: report.tasks });
    return report;
  }
}
