/**
 * The run repository port (docs/architecture.md#ports): reads, the claim, the fenced run writes and the
 * recovery sweeps' finds. Field ownership is visible in the methods: launch bookkeeping and completion each
 * have their own, and a write that decides takes the domain's pure `decide`.
 */
import type { ClaimCandidate, ClaimSelectionInput, OwnerShare } from "../claim.js";
import type { PunctualError } from "../errors.js";
import type { FencingToken, OwnerId, RunId, TaskId } from "../ids.js";
import type { RunChange, RunTaskContext } from "../run-change.js";
import type { Run, RunTrigger } from "../run.js";
import type { TargetKind } from "../target.js";
import type { Task } from "../task.js";
import type { DurationMs, Instant } from "../time.js";
import type { OwnerScope, Page, RunQuery, RunSearch } from "./queries.js";

/** What the claim step hands the launcher: the claimed run and the task it belongs to. */
export interface ClaimedRun {
  readonly run: Run;
  readonly task: Task;
}

export interface ClaimRequest {
  readonly now: Instant;
  readonly replicaId: string;
  readonly leaseMs: DurationMs;
  /** The global budget: launching + running runs across all replicas stay at or below it. */
  readonly maxConcurrentRuns: number;
  /** At most this many runs claimed by this call. */
  readonly limit: number;
  readonly handlerNames: ReadonlySet<string>;
  /**
   * Each owner's share of the budget: a store whose owners may be capped below the budget counts each
   * candidate owner's launching/running runs (`ownerActive`) and, where claimers run in parallel, makes
   * sure two claims together never put an owner over its share. @default none
   */
  readonly share?: OwnerShare;
}

/** Runs: claims, fenced launch bookkeeping, completion, sweeps and reads. */
export interface RunRepository {
  findRun(scope: OwnerScope, id: RunId): Promise<Run | null>;
  findManualRun(taskId: TaskId, idempotencyKey: string): Promise<Run | null>;
  /**
   * The run with its task, whatever the owner and even when the task is deleted (its row stays until
   * its runs are purged): what a callback needs to check its per-run token and take a late verdict
   * (docs/semantics.md#cancellation). Null when the run does not exist.
   */
  findRunWithTask(id: RunId): Promise<ClaimedRun | null>;
  /** How many runs of `trigger` `owner`'s tasks got at or after `since` (by `queued_at`): rate quotas. */
  countRecentRuns(owner: OwnerId, trigger: RunTrigger, since: Instant): Promise<number>;
  listRuns(scope: OwnerScope, taskId: TaskId, query: RunQuery): Promise<Page<Run>>;
  /**
   * Runs across the tasks in `scope` matching `search`, newest first (docs/storage.md#runs-across-tasks):
   * each filter is served by an index, never by reading `runs` whole.
   * @throws validation_failed when the cursor was not made by this listing
   */
  searchRuns(scope: OwnerScope, search: RunSearch): Promise<Page<Run>>;
  /**
   * Claims queued runs within the global budget, serialised in the database: reads the candidates and the
   * busy threads and tasks, lets `select` choose (the domain's FIFO and overlap rules), and moves each
   * chosen run to `launching` with `claim(run, task, token)`; the adapter mints each fencing token.
   */
  claimRuns(
    request: ClaimRequest,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
  ): Promise<readonly ClaimedRun[]>;
  /**
   * Applies a batch of run changes in one transaction (task locks first, then run locks, in id order),
   * in the order given: a request for a run already changed earlier in the batch sees that change (a
   * launch and then its completion). Each request's `decide` sees the run, read under its lock, and
   * what run transitions need of its task, and returns the change, or null to write nothing. A request
   * that is refused (its token no longer matches: lease_lost; its run is missing: not_found; or
   * `decide` throws a PunctualError) writes nothing and leaves the others alone; any other throw from
   * `decide` writes nothing of the batch and propagates. The task's launch bookkeeping and verdict
   * fields are written as the requests' changes, applied in order, would write them (`run_count` grows
   * by the launches recorded). The port's one run change besides claims and owner commands
   * (`mutateTask`): a single change is a batch of one (docs/storage.md#the-store-contract).
   */
  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]>;
  /**
   * Launching runs to reconcile (docs/operations.md#replica-liveness-what-silent-means): those whose claim expired
   * before `now`, then (with `silentSince`) those whose claiming replica's last heartbeat is older than
   * `silentSince`, each set by claim expiry. A claim of a replica that never beat waits for its expiry.
   */
  findExpiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]>;
  /**
   * Running runs of tasks whose target is of `targetKind`, with their tasks, in id order after `after`
   * (null: from the start): the runs a watcher polls on their targets.
   */
  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]>;
  /** Running or launching runs whose `deadline_at` has passed. */
  findPastDeadline(now: Instant, limit: number): Promise<readonly RunId[]>;
  /** Queued runs older than their task's queue timeout. */
  findQueueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]>;
  /**
   * Queued runs of handler tasks whose handler is not one of `served`, due (`not_before`) before
   * `dueBefore`, earliest first, with their handler's name (docs/semantics.md#handler-runs-nobody-serves).
   */
  findUnservedHandlerRuns(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]>;
  /** Running handler runs claimed by replicas whose heartbeat is older than `silentSince`. */
  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]>;
  /** Deletes terminal runs finished before `before`, and deleted tasks with no active run. */
  purge(before: Instant, limit: number): Promise<number>;
  /** The earliest `not_before` of a queued run and the earliest deadline, for the coordinator's sleep. */
  nextRunWakeAt(): Promise<Instant | null>;
  /** The fleet's queue at `now`, every owner's (for metrics: docs/operations.md#metrics-and-probes). */
  queueStats(now: Instant): Promise<QueueStats>;
}

/** A queued handler run no live replica serves, and the handler it names. */
export interface UnservedRun {
  readonly id: RunId;
  readonly handlerName: string;
}

/** What `RunRepository.queueStats` counts. */
export interface QueueStats {
  /** Runs `queued`, whether or not their `not_before` has come. */
  readonly queued: number;
  /** The earliest `not_before` among queued runs whose `not_before` has come (null: none waiting). */
  readonly oldestReadyAt: Instant | null;
  /** Runs `launching` or `running`: the global budget's slots in use. */
  readonly active: number;
}

/**
 * One change of a `changeRuns` batch: the run, the fence, and the pure `decide` applied to the run and to
 * what run transitions need of its task (`RunTaskContext`: its schedule type, options, target kind and
 * whether its target can be told to stop), which is all a store reads of it unless `withTask` asks for
 * the whole task.
 */
export interface RunChangeRequest {
  readonly id: RunId;
  /** When given, the change is fenced: refused (lease_lost) unless it is still the run's claim token. */
  readonly token?: FencingToken;
  readonly decide: (run: Run, task: RunTaskContext) => RunChange | null;
  /**
   * What the writer knows the run was (it claimed and launched it), so that a store may decide without
   * reading it again (docs/storage.md#the-fenced-run-write). Looked at on a run's first request of a
   * batch only. A store may ignore it; one that uses it writes only where the database still holds what
   * `decide` depended on, and otherwise answers exactly as without it. @default none
   */
  readonly expect?: RunExpectation;
  /**
   * The run's whole task is read with it, under the same lock, and a changed result carries the task as
   * the change found it (`RunChangeResult.task`: what asking the target to stop needs).
   * @default false
   */
  readonly withTask?: boolean;
}

/**
 * A run as its writer last saw it, every field as the store holds it (a claimed run as the claim wrote
 * it), with the context of its task at `taskVersion` (`Task.version`): what `decide` is applied to when
 * a store takes the expectation instead of reading the run.
 */
export interface RunExpectation {
  readonly run: Run;
  readonly task: RunTaskContext;
  readonly taskVersion: number;
}

/** What became of one request of a batch, at the same index. */
export type RunChangeResult =
  | {
      readonly kind: "changed";
      readonly change: RunChange;
      /** With `withTask`: the run's task as the change found it (before the change's bookkeeping). */
      readonly task?: Task;
    }
  /** `decide` returned null: nothing written. */
  | { readonly kind: "unchanged" }
  /** lease_lost, not_found, or the transition `decide` refused: nothing written for this request. */
  | { readonly kind: "refused"; readonly error: PunctualError };
