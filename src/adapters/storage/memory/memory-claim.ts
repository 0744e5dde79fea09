/**
 * The claim round in memory: in one atomic transaction over `MemoryTables`, the budget count, the owners'
 * heads of the queue with their busy threads and tasks, `select`'s choice, the minted tokens and the
 * claimed runs' writes. The reference semantics of `RunRepository.claimRuns`.
 */
import type { ClaimCandidate, ClaimSelectionInput } from "../../../domain/claim.js";
import { ownerMaxActiveRuns, threadKey } from "../../../domain/claim.js";
import type { FencingToken, TaskId } from "../../../domain/ids.js";
import type { ClaimedRun, ClaimRequest } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import { holdsSlot } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import { claimBudget, claimCandidateOf, claimChosen } from "../shared/claim-round.js";
import { runRow } from "./memory-rows.js";
import { ConstraintViolationError, taskOfRun } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

/** Launching or running runs by owner. */
function countByOwner(runs: readonly Run[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(run.owner, (counts.get(run.owner) ?? 0) + 1);
  return counts;
}

/** A claim these keys refuse is skipped: another run holds the task's or the thread's slot. */
const SLOT_KEYS: readonly string[] = ["runs_task_slot_uq", "runs_thread_slot_uq"];

/** Claims look at this many queued runs at least: a prefix in global order holds every thread's head. */
const MIN_CLAIM_WINDOW = 1000;

export class MemoryClaim {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  claimRuns(
    request: ClaimRequest,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
  ): Promise<readonly ClaimedRun[]> {
    return this.#tables.atomically(() => {
      const active = this.#tables.activeRuns();
      const slots = active.filter((run) => holdsSlot(run.status));
      const budget = claimBudget(request, slots.length);
      const window = Math.max(4 * request.limit, MIN_CLAIM_WINDOW);
      const candidates = this.#ownerHeads(active, window);
      const offered = new Set(candidates.map((candidate) => candidate.id));
      // A cancelled run whose target was not told holds its thread and task until its deadline.
      const holding = [
        ...slots,
        ...this.#tables.heldRuns().filter((run) => (run.deadlineAt ?? 0) > request.now),
      ];
      const chosen = select({
        candidates,
        busyThreads: new Set(holding.map((run) => threadKey(run.threadScope, run.threadId))),
        busyTasks: new Set(holding.filter((run) => run.exclusive).map((run) => run.taskId)),
        budget,
        ownerActive: countByOwner(slots),
      });
      // The budget and the owners' shares are the store's to keep, whatever `select` returned.
      const share = request.share;
      const held = countByOwner(slots);
      return claimChosen(
        chosen,
        budget,
        claim,
        {
          rowOf: (candidate) =>
            offered.has(candidate.id) ? this.#tables.run(candidate.id) : undefined,
          statusOf: (run) => run.status,
          claimable: (run) => {
            offered.delete(run.id);
            return { run, task: this.#taskOf(run) };
          },
          writeClaims: (decisions) =>
            decisions.flatMap(({ claimed }) => {
              const row = runRow(claimed.run);
              return this.#writeClaim(row) ? [{ run: row, task: claimed.task }] : [];
            }),
        },
        share === undefined
          ? undefined
          : {
              admits: (owner) => (held.get(owner) ?? 0) < ownerMaxActiveRuns(share, owner),
              claimed: (owner) => held.set(owner, (held.get(owner) ?? 0) + 1),
            },
      );
    });
  }

  /** Writes a claimed run; false when a slot key refuses it (that run is skipped, not an error). */
  #writeClaim(run: Run): boolean {
    try {
      this.#tables.putRun(run);
      return true;
    } catch (error) {
      if (error instanceof ConstraintViolationError && SLOT_KEYS.includes(error.constraint)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Each owner's first `window` queued runs in claim order (docs/semantics.md#fair-share), each marked
   * `queuedBehind` when an earlier queued run of its thread (or exclusive task) is not among them.
   */
  #ownerHeads(active: readonly Run[], window: number): ClaimCandidate[] {
    const queued = active
      .filter((run) => run.status === "queued")
      .sort((a, b) => a.queuedAt - b.queuedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const threads = new Set<string>();
    const tasks = new Set<TaskId>();
    const taken = new Map<string, number>();
    const heads: ClaimCandidate[] = [];
    // `window` runs in all, at least one per owner, as the database stores read.
    const owners = new Set(queued.map((run) => run.owner)).size;
    const perOwner = Math.max(1, Math.ceil(window / Math.max(1, owners)));
    for (const run of queued) {
      const thread = threadKey(run.threadScope, run.threadId);
      const behind = threads.has(thread) || (run.exclusive && tasks.has(run.taskId));
      threads.add(thread);
      if (run.exclusive) tasks.add(run.taskId);
      const count = taken.get(run.owner) ?? 0;
      if (count >= perOwner) continue;
      taken.set(run.owner, count + 1);
      heads.push(claimCandidateOf(run, this.#taskOf(run), behind));
    }
    return heads;
  }

  #taskOf(run: Run): Task {
    return taskOfRun(this.#tables, run);
  }
}
