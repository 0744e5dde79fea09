/**
 * Which queued runs may be claimed for launch (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch): `not_before` has passed, the run heads its
 * thread's FIFO (`queued_at`, then `id`) and, when exclusive, its task's FIFO; its thread and (exclusive)
 * task hold no launching/running run; its owner holds fewer than its share of launching/running runs
 * (`max_active_runs_per_owner`, docs/semantics.md#fair-share); and the global budget has room. The
 * eligible runs are taken round-robin across owners, owners in the order of their queue heads, so no
 * owner waits behind another's backlog for more than one claim. Pure: adapters run it inside the
 * claiming transaction that serialises the budget.
 */
import type { OwnerId, RunId, TaskId, ThreadId } from "./ids.js";
import type { Instant } from "./time.js";

/** A queued run as the claim step sees it. */
export interface ClaimCandidate {
  readonly id: RunId;
  readonly taskId: TaskId;
  readonly owner: OwnerId;
  readonly threadScope: string;
  readonly threadId: ThreadId;
  readonly exclusive: boolean;
  readonly notBefore: Instant;
  readonly queuedAt: Instant;
  /** The handler name for handler targets; null for agent and webhook targets. */
  readonly handlerName: string | null;
  /**
   * An earlier queued run of its thread (or, when exclusive, of its task) exists outside the candidates
   * read (a store that reads each owner's queue head rather than one prefix of the queue says so): this
   * run is not the head of its FIFO. @default false
   */
  readonly queuedBehind?: boolean;
}

/** The owners' share of the budget (docs/semantics.md#fair-share). */
export interface OwnerShare {
  /** Launching or running runs one owner may hold at most. */
  readonly maxActiveRuns: number;
  /** Owners with their own maximum. */
  readonly overrides: ReadonlyMap<string, number>;
  /**
   * When set, `maxActiveRuns` is this fraction of the budget in force (at least 1), and follows it when
   * the budget changes (`shareForBudget`). @default none: `maxActiveRuns` is fixed
   */
  readonly fractionOfBudget?: number;
}

/** `share` under a budget of `budget` runs: a share given as a fraction of the budget follows it. */
export function shareForBudget(share: OwnerShare, budget: number): OwnerShare {
  const fraction = share.fractionOfBudget;
  if (fraction === undefined) return share;
  const maxActiveRuns = Math.max(1, Math.floor(budget * fraction));
  return maxActiveRuns === share.maxActiveRuns ? share : { ...share, maxActiveRuns };
}

/** The share that leaves every owner the whole budget (`budget` runs): no per-owner cap. */
export function wholeBudgetShare(budget: number): OwnerShare {
  return { maxActiveRuns: budget, overrides: new Map() };
}

/** The most launching or running runs `owner` may hold. */
export function ownerMaxActiveRuns(share: OwnerShare, owner: string): number {
  return share.overrides.get(owner) ?? share.maxActiveRuns;
}

/** Whether any owner's cap is below `budget`: only then need a store count and guard owners' runs. */
export function shareLimitsOwners(share: OwnerShare, budget: number): boolean {
  if (share.maxActiveRuns < budget) return true;
  for (const cap of share.overrides.values()) if (cap < budget) return true;
  return false;
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
  /** Launching or running runs each candidate's owner holds (an owner left out holds none). */
  readonly ownerActive?: ReadonlyMap<string, number>;
  /** The owners' share; absent: no owner is capped below the budget. */
  readonly share?: OwnerShare;
  readonly now: Instant;
  /** Handler names this replica can run; other handler runs are left for the replicas that can. */
  readonly handlerNames: ReadonlySet<string>;
}

/** The key a thread is known by: its scope and id. */
export function threadKey(threadScope: string, threadId: string): string {
  return `${threadScope}\u0000${threadId}`;
}

/**
 * The candidates to claim now, at most `budget` of them: round-robin across owners (each owner's
 * eligible runs in claim order, owners in the order of their first candidate), each owner within its share.
 */
export function selectClaimable(input: ClaimSelectionInput): ClaimCandidate[] {
  const eligible = new Map<string, ClaimCandidate[]>();
  const seenThreads = new Set<string>();
  const seenTasks = new Set<TaskId>();
  const ordered = [...input.candidates].sort(byClaimOrder);
  for (const candidate of ordered) {
    const thread = threadKey(candidate.threadScope, candidate.threadId);
    const headOfThread = !seenThreads.has(thread);
    const headOfTask = !candidate.exclusive || !seenTasks.has(candidate.taskId);
    // Whatever happens to it, this run now stands before later runs of its thread and task.
    seenThreads.add(thread);
    if (candidate.exclusive) seenTasks.add(candidate.taskId);
    // Owners in the order of their queue heads, whether or not the head can go now.
    let mine = eligible.get(candidate.owner);
    if (mine === undefined) {
      mine = [];
      eligible.set(candidate.owner, mine);
    }
    if (!headOfThread || !headOfTask || candidate.queuedBehind === true) continue;
    if (candidate.notBefore > input.now) continue;
    if (input.busyThreads.has(thread)) continue;
    if (candidate.exclusive && input.busyTasks.has(candidate.taskId)) continue;
    if (candidate.handlerName !== null && !input.handlerNames.has(candidate.handlerName)) continue;
    mine.push(candidate);
  }
  const queues = [...eligible].map(([owner, runs]) => {
    const held = input.ownerActive?.get(owner) ?? 0;
    const cap = input.share === undefined ? Infinity : ownerMaxActiveRuns(input.share, owner);
    return { runs, left: Math.min(runs.length, Math.max(0, cap - held)), next: 0 };
  });
  const chosen: ClaimCandidate[] = [];
  for (let taken = true; taken && chosen.length < input.budget;) {
    taken = false;
    for (const queue of queues) {
      if (chosen.length >= input.budget) break;
      if (queue.next >= queue.left) continue;
      const run = queue.runs[queue.next++];
      if (run === undefined) continue;
      chosen.push(run);
      taken = true;
    }
  }
  return chosen;
}

/** Claim order: `queued_at`, then `id`. */
function byClaimOrder(a: ClaimCandidate, b: ClaimCandidate): number {
  if (a.queuedAt !== b.queuedAt) return a.queuedAt - b.queuedAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
