/**
 * The library's notifications (docs/library.md#events): `scheduler.on(event, listener)` with a typed
 * event map, built on the scheduler's internal events (internal-events.ts). Each is sent by the replica
 * that observed it, at least once (an admission a store writes again after a conflict decides, and
 * notifies, again): the run ledger stays the truth. A listener that throws is logged and ignored; it
 * never blocks or breaks the coordinator, and an async listener's promise is not awaited.
 */
import type { TaskId } from "../../domain/ids.js";
import type { RunStatus } from "../../domain/run.js";
import type { Instant } from "../../domain/time.js";
import type { SchedulerEvents } from "./internal-events.js";
import { formatInstant, runView, taskView } from "../shapes/view-mappers.js";
import type { RunView, TaskView } from "../shapes/view-mappers.js";

/** An occurrence decided without a run: skipped or missed (a range of nominal times for `missed`). */
export interface OccurrenceEvent {
  readonly task_id: string;
  /** The (first) nominal time, RFC 3339. */
  readonly scheduled_for: string;
  /** The last nominal time of a range (missed, excluded); equal to `scheduled_for` for one. */
  readonly until: string;
  readonly count: number;
  readonly reason: string;
}

/** Every notification and its payload. */
export interface SchedulerEventMap {
  /** A run started on its target (it is `running`). */
  readonly "run:launched": { readonly run: RunView };
  readonly "run:succeeded": { readonly run: RunView };
  /** A run ended `failed` (no attempt left, or no retry asked for: see `run.reason`). */
  readonly "run:failed": { readonly run: RunView };
  /**
   * An attempt failed and the run is queued again for a retry (`run.not_before`), or an ended run was
   * redriven (docs/semantics.md#redrive).
   */
  readonly "run:retrying": { readonly run: RunView };
  readonly "run:timed_out": { readonly run: RunView };
  readonly "run:cancelled": { readonly run: RunView };
  /** An occurrence was skipped (overlap, excluded dates) or a queued run skipped by its queue timeout. */
  readonly "occurrence:skipped": OccurrenceEvent;
  /** Occurrences were missed (downtime, a pause, the catch-up window). */
  readonly "occurrence:missed": OccurrenceEvent;
  /**
   * A due task's stored fields no longer parse (docs/operations.md#a-task-that-does-not-parse): it is out
   * of the due set until an edit gives each named field anew. Sent once per defect.
   */
  readonly "task:defective": {
    readonly task_id: string;
    readonly defect: NonNullable<TaskView["defect"]>;
  };
  /**
   * This replica's sweep found another replica silent for the liveness timeout and settled its work
   * (docs/operations.md#replica-liveness-what-silent-means): `claims` launch claims reconciled, `runs` handler runs
   * ended `replica_lost` (each also shows as `run:failed` or `run:retrying`). Sent once per sweep that
   * settles something of it: a lost replica with nothing left to settle is not reported again.
   */
  readonly "replica:lost": {
    readonly replica_id: string;
    readonly claims: number;
    readonly runs: number;
  };
}

export type SchedulerEventName = keyof SchedulerEventMap;
export type SchedulerEventListener<E extends SchedulerEventName> = (
  payload: SchedulerEventMap[E],
) => unknown;

const ENDED: Partial<Record<RunStatus, SchedulerEventName>> = {
  succeeded: "run:succeeded",
  failed: "run:failed",
  timed_out: "run:timed_out",
  cancelled: "run:cancelled",
};

/** The library's notifications over one scheduler's internal events. */
export class LibraryEvents {
  readonly #listeners = new Map<SchedulerEventName, Set<(payload: never) => unknown>>();
  /** Listeners of every event: none (the usual case) and a run change costs a comparison, nothing made. */
  #count = 0;
  readonly #onListenerError: (error: unknown, event: SchedulerEventName) => void;

  constructor(onListenerError: (error: unknown, event: SchedulerEventName) => void) {
    this.#onListenerError = onListenerError;
  }

  /** Calls `listener` on every `event`; returns a function that stops it. */
  on<E extends SchedulerEventName>(event: E, listener: SchedulerEventListener<E>): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) this.#listeners.set(event, (set = new Set()));
    if (!set.has(listener)) {
      set.add(listener);
      this.#count++;
    }
    return () => {
      if (set.delete(listener)) this.#count--;
    };
  }

  /** Listens to `events` (the runtime's), translating what it reports. */
  connect(events: SchedulerEvents): void {
    events.on("run:changed", ({ run, from }) => {
      if (this.#count === 0 || run.status === from) return;
      if (run.status === "running") this.#emit("run:launched", () => ({ run: runView(run) }));
      else if (run.status === "queued") {
        // An attempt failed and is retried (from launching or running), or an operator redrove an ended
        // run (docs/semantics.md#redrive): either way the run waits for its next attempt.
        this.#emit("run:retrying", () => ({ run: runView(run) }));
      } else if (run.status === "skipped") {
        this.#emit("occurrence:skipped", () =>
          occurrenceOf(run.taskId, run.scheduledFor, null, 1, run.reason ?? "skipped"),
        );
      } else {
        const name = ENDED[run.status];
        if (name !== undefined) this.#emit(name, () => ({ run: runView(run) }));
      }
    });
    events.on("replica:lost", ({ replicaId, claims, runs }) => {
      this.#emit("replica:lost", () => ({ replica_id: replicaId, claims, runs }));
    });
    events.on("task:defective", ({ task }) => {
      this.#emit("task:defective", () => {
        const view = taskView(task);
        return { task_id: task.id, defect: view.defect ?? { detected_at: null, fields: [] } };
      });
    });
    events.on("admission:decided", ({ taskId, admission }) => {
      for (const decision of admission.decisions) {
        if (decision.kind === "skip") {
          this.#emit("occurrence:skipped", () =>
            occurrenceOf(taskId, decision.scheduledFor, null, 1, decision.reason),
          );
        } else if (decision.kind === "miss" || decision.kind === "exclude") {
          const name = decision.kind === "miss" ? "occurrence:missed" : "occurrence:skipped";
          this.#emit(name, () =>
            occurrenceOf(taskId, decision.from, decision.until, decision.count, decision.reason),
          );
        }
      }
    });
  }

  #emit<E extends SchedulerEventName>(event: E, payload: () => SchedulerEventMap[E]): void {
    const set = this.#listeners.get(event);
    if (set === undefined || set.size === 0) return;
    let made: SchedulerEventMap[E];
    try {
      made = payload();
    } catch (error) {
      this.#onListenerError(error, event);
      return;
    }
    for (const listener of set) {
      try {
        const answer = (listener as SchedulerEventListener<E>)(made);
        if (answer instanceof Promise) {
          answer.catch((error: unknown) => {
            this.#onListenerError(error, event);
          });
        }
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }
}

function occurrenceOf(
  taskId: TaskId,
  from: Instant,
  until: Instant | null,
  count: number,
  reason: string,
): OccurrenceEvent {
  return {
    task_id: taskId,
    scheduled_for: formatInstant(from),
    until: formatInstant(until ?? from),
    count,
    reason,
  };
}
