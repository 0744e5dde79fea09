/**
 * Which queued runs may be claimed for launch (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch): `not_before` has passed, the run heads its
 * thread's FIFO (`queued_at`, then `id`) and, when exclusive, its task's FIFO; its thread and (exclusive)
 * task hold no launching/running run; and the global budget has room. Pure: adapters run it inside the
 * claiming transaction that serialises the budget.
 */
import type { RunId, TaskId, ThreadId } from "./ids.js";
import type { Instant } from "./time.js";

/** A queued run as the claim step sees it. */
export interface ClaimCandidate {
  readonly id: RunId;
  readonly taskId: TaskId;
  readonly threadScope: string;
  readonly threadId: ThreadId;
  readonly exclusive: boolean;
  readonly notBefore: Instant;
  readonly queuedAt: Instant;
  /** The handler name for handler targets; null for agent and webhook targets. */
  readonly handlerName: string | null;
}

export interface ClaimSelectionInput {
  /** Queued runs in claim order (`queued_at`, then `id`); runs not yet due included, for FIFO. */
  readonly candidates: readonly ClaimCandidate[];
  /** Threads (`threadKey`) with a launching or running run. */
  readonly busyThreads: ReadonlySet<string>;
  /** Tasks with an exclusive launching or running run. */
  readonly busyTasks: ReadonlySet<TaskId>;
  /** Free slots in the global budget. */
  readonly budget: number;
  readonly now: Instant;
  /** Handler names this replica can run; other handler runs are left for the replicas that can. */
  readonly handlerNames: ReadonlySet<string>;
}

/** The key a thread is known by: its scope and id. */
export function threadKey(threadScope: string, threadId: string): string {
  return `${threadScope}\u0000${threadId}`;
}

/** The candidates to claim now, in claim order, at most `budget` of them. */
export function selectClaimable(input: ClaimSelectionInput): ClaimCandidate[] {
  const chosen: ClaimCandidate[] = [];
  const seenThreads = new Set<string>();
  const seenTasks = new Set<TaskId>();
  for (const candidate of input.candidates) {
    if (chosen.length >= input.budget) break;
    const thread = threadKey(candidate.threadScope, candidate.threadId);
    const headOfThread = !seenThreads.has(thread);
    const headOfTask = !candidate.exclusive || !seenTasks.has(candidate.taskId);
    // Whatever happens to it, this run now stands before later runs of its thread and task.
    seenThreads.add(thread);
    if (candidate.exclusive) seenTasks.add(candidate.taskId);
    if (!headOfThread || !headOfTask) continue;
    if (candidate.notBefore > input.now) continue;
    if (input.busyThreads.has(thread)) continue;
    if (candidate.exclusive && input.busyTasks.has(candidate.taskId)) continue;
    if (candidate.handlerName !== null && !input.handlerNames.has(candidate.handlerName)) continue;
    chosen.push(candidate);
  }
  return chosen;
}
