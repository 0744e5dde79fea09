/**
 * The ports (docs/architecture.md): what the service needs from storage, launchers and thread lookups. Declared here,
 * implemented by adapters. Field ownership is visible in the methods: admission, launch bookkeeping and
 * completion each have their own, and none writes a whole task back. Every read and write is scoped to an
 * owner (or explicitly to all owners, for admin tokens and the coordinator).
 *
 * Methods that decide take a synchronous, pure `decide` function from the domain: the adapter opens the
 * transaction, locks the rows, calls `decide` with what it read, and writes exactly what it returns.
 */
import type { AbortSignalLike } from "./abort.js";
import type { AdmissionWrite } from "./admit-task.js";
import type { Calendar } from "./calendar.js";
import type { ClaimCandidate, ClaimSelectionInput, OwnerShare } from "./claim.js";
import type { PunctualError } from "./errors.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "./ids.js";
import type { NewRun } from "./new-run.js";
import type { Run, RunStatus, RunTrigger } from "./run.js";
import type { CalendarItem } from "./schedule/schedule-spec.js";
import type {
  CompletionVerdict,
  ReconcileFinding,
  RunChange,
  RunTaskContext,
} from "./run-change.js";
import type { Task, TaskStatus } from "./task.js";
import type { JsonValue, TargetKind } from "./target.js";
import type { DurationMs, Instant } from "./time.js";

/** Whose rows a call may see: one owner's, or every owner's (admin tokens, the coordinator). */
export type OwnerScope =
  { readonly kind: "owner"; readonly owner: OwnerId } | { readonly kind: "all" };

/** A page of results with an opaque cursor for the next one (null on the last page). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

export interface TaskQuery {
  readonly status?: TaskStatus;
  readonly targetKind?: TargetKind;
  readonly thread?: { readonly threadScope?: string; readonly threadId: ThreadId };
  /** Only the task with this key (docs/semantics.md#task-keys). */
  readonly key?: string;
  /** Only the tasks of this declared-schedules group. */
  readonly group?: string;
  /** Only the tasks whose title contains this text (ignoring case) or whose key is this text. */
  readonly search?: string;
  /** Page size, 1..200. */
  readonly limit: number;
  readonly cursor?: string;
}

export interface RunQuery {
  readonly status?: RunStatus;
  readonly trigger?: RunTrigger;
  readonly limit: number;
  readonly cursor?: string;
}

/**
 * Runs across an owner's tasks (docs/api.md `GET /v1/runs`), newest first (`scheduled_for, id`
 * descending). Every filter is optional; given together they all hold. Instants: `*After` inclusive,
 * `*Before` exclusive.
 */
export interface RunSearch {
  /** Any of these statuses; absent or empty: every status. */
  readonly statuses?: readonly RunStatus[];
  readonly taskId?: TaskId;
  /** The kind of the task's target when the run was written. */
  readonly targetKind?: TargetKind;
  readonly trigger?: RunTrigger;
  readonly late?: boolean;
  readonly scheduledAfter?: Instant;
  readonly scheduledBefore?: Instant;
  /** Only ended runs finished in the range. */
  readonly finishedAfter?: Instant;
  readonly finishedBefore?: Instant;
  /** Page size, 1..200. */
  readonly limit: number;
  readonly cursor?: string;
}

/** A task and its active runs, read under the task's row lock. */
export interface LockedTask {
  readonly task: Task;
  readonly activeRuns: readonly Run[];
  /**
   * The run `mutateTask` was asked to lock (`options.run`), read under the task's lock and then its own;
   * null when the task has no run of that id.
   */
  readonly run?: Run | null;
}

/**
 * What a command decided, to be written in the same transaction. `task` replaces the task row's fields
 * the command owns; `expectedVersion` makes the write a compare-and-set on `version`.
 */
export interface TaskMutation<T> {
  readonly task?: Task;
  readonly expectedVersion?: number;
  readonly newRuns?: readonly NewRun[];
  /** Runs (read in `activeRuns`) rewritten under the lock, such as cancellations. */
  readonly runUpdates?: readonly Run[];
  /** What the command returns; `insertedRuns` are the rows written from `newRuns`, in order. */
  readonly result: (insertedRuns: readonly (Run | null)[]) => T;
}

/** The result of admitting one batch of due tasks. */
export interface AdmissionReport {
  /** Tasks admitted in this batch. */
  readonly tasks: number;
  /** New rows written, by status (`queued`, `skipped`, `missed`). */
  readonly decisions: number;
  readonly queuedRuns: readonly Run[];
  readonly skipped: number;
  readonly missed: number;
  /** Active runs cancelled or asked to stop by `cancel_other`. */
  readonly cancellations: readonly Run[];
  /**
   * Due tasks whose stored fields no longer parse (docs/operations.md#a-task-that-does-not-parse): not
   * admitted, and marked (`defect.detectedAt`) so that no later batch reads them again until an edit.
   */
  readonly defective: readonly Task[];
}

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

/**
 * Tasks: creation, reads, owner commands under the row lock, and admission.
 *
 * A task whose schedule names calendars holds a snapshot of each (name and version): `insertTask` writes
 * it, and `mutateTask` writes a changed one, only while each snapshot it brings is the calendar's current
 * version, checked in the same transaction (so a calendar edited or deleted meanwhile is never missed).
 */
export interface TaskRepository {
  /**
   * Inserts a new task.
   * @throws version_conflict (CalendarChangedError) when a calendar it names is not at its snapshot's version
   * @throws key_taken when another task of the owner, not deleted, has its key
   */
  insertTask(task: Task): Promise<void>;
  /**
   * Inserts every task in one transaction, all or none (docs/semantics.md#bulk-create): one bulk
   * statement, not a loop of single inserts. An empty list writes nothing.
   * @throws version_conflict (CalendarChangedError) when a calendar one of them names is not at its
   * snapshot's version; nothing is written then
   */
  insertTasks(tasks: readonly Task[]): Promise<void>;
  /** The task, or null when it does not exist, is deleted or is outside `scope`. */
  findTask(scope: OwnerScope, id: TaskId): Promise<Task | null>;
  /** The owner's task (not deleted) with this key, or null. */
  findTaskByKey(owner: OwnerId, key: string): Promise<Task | null>;
  /** How many tasks `owner` has, deleted ones left out (the `tasks_per_owner` quota). */
  countTasks(owner: OwnerId): Promise<number>;
  listTasks(scope: OwnerScope, query: TaskQuery): Promise<Page<Task>>;
  /**
   * Runs an owner command (edit, pause, resume, cancel, trigger, backfill, delete) under the task's row
   * lock: reads the task and its active runs, calls `decide`, writes what it returns in one transaction.
   * With `options.run`, that run of the task (any status) is locked and read too (`LockedTask.run`), so a
   * command on an ended run (a redrive) decides on what it locked; it may be among `runUpdates`.
   * @throws not_found when the task is missing, deleted or outside `scope`
   * @throws version_conflict when `expectedVersion` no longer matches, or (CalendarChangedError) when a
   * calendar snapshot the mutation adds or changes is not the calendar's current version
   */
  mutateTask<T>(
    scope: OwnerScope,
    id: TaskId,
    decide: (locked: LockedTask) => TaskMutation<T>,
    options?: { readonly run?: RunId },
  ): Promise<T>;
  /**
   * Admits up to `limit` enabled tasks with `next_run_at <= now`, skipping rows other replicas hold and
   * tasks marked defective: for each, one transaction (or one per batch) that reads its active runs,
   * calls `decide`, and writes what it returns as it is: the new runs, the rewritten active runs and the
   * task's schedule fields. A due task read with a `defect` is not decided: the store marks it
   * (`defect_at = now`) and reports it in `defective`.
   */
  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport>;
  /** The earliest `next_run_at` of an enabled task not marked defective, for the coordinator's sleep. */
  nextDueAt(): Promise<Instant | null>;
}

/**
 * An owner's named calendars. Writes to one calendar are serialised with the task writes that check its
 * version (see `TaskRepository`).
 */
export interface CalendarRepository {
  /** The owner's calendars among `names` (the missing ones left out). */
  findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]>;
  /** Every calendar of the owner, by name. */
  listCalendars(owner: OwnerId): Promise<readonly Calendar[]>;
  /** Creates the calendar (version 1) or replaces its items (version + 1), and returns it. */
  putCalendar(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
  ): Promise<Calendar>;
  /**
   * Deletes the calendar; false when the owner has none of that name.
   * @throws calendar_in_use naming a task (not deleted) whose schedule names it; nothing is deleted
   */
  deleteCalendar(owner: OwnerId, name: string): Promise<boolean>;
  /** The owner's tasks (not deleted) whose schedule names the calendar, oldest first. */
  tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]>;
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
   * Changes one run under its task's and its own row lock (task first, then run): `decide` sees the
   * current run and task and returns the change, or null to write nothing. With `token`, the write is
   * fenced: it is refused when the run's claim token no longer matches.
   * @throws lease_lost when `token` is given and no longer the run's claim token
   * @throws not_found when the run does not exist
   */
  changeRun(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null>;
  /**
   * Applies a batch of run changes in one transaction, each as `changeRun` would (task locks first, then
   * run locks, in id order), in the order given: a request for a run already changed earlier in the batch
   * sees that change (a launch and then its completion). A request that is refused (its token no longer
   * matches: lease_lost; its run is missing: not_found; or `decide` throws a PunctualError) writes nothing
   * and leaves the others alone. The task's launch bookkeeping and verdict fields are written as the
   * requests' changes, applied in order, would write them (`run_count` grows by the launches recorded).
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
  /** Running handler runs claimed by replicas whose heartbeat is older than `silentSince`. */
  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]>;
  /** Deletes terminal runs finished before `before`, and deleted tasks with no active run. */
  purge(before: Instant, limit: number): Promise<number>;
  /** The earliest `not_before` of a queued run and the earliest deadline, for the coordinator's sleep. */
  nextRunWakeAt(): Promise<Instant | null>;
  /** The fleet's queue at `now`, every owner's (for metrics: docs/operations.md#metrics-and-probes). */
  queueStats(now: Instant): Promise<QueueStats>;
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
 * One change of a `changeRuns` batch: the arguments of `changeRun`, except that `decide` sees only what
 * run transitions need of the task (its schedule type and options), which is all a store reads of it.
 */
export interface RunChangeRequest {
  readonly id: RunId;
  /** When given, the change is fenced: refused (lease_lost) unless it is still the run's claim token. */
  readonly token?: FencingToken;
  readonly decide: (run: Run, task: RunTaskContext) => RunChange | null;
}

/** What became of one request of a batch, at the same index. */
export type RunChangeResult =
  | { readonly kind: "changed"; readonly change: RunChange }
  /** `decide` returned null: nothing written. */
  | { readonly kind: "unchanged" }
  /** lease_lost, not_found, or the transition `decide` refused: nothing written for this request. */
  | { readonly kind: "refused"; readonly error: PunctualError };

/** Replica liveness, for handler runs lost with their replica (docs/semantics.md#run-statuses). */
export interface ReplicaRegistry {
  heartbeat(replicaId: string, now: Instant): Promise<void>;
}

/** The details a launcher needs to start one run. */
export interface LaunchRequest {
  readonly run: Run;
  readonly task: Task;
  /** Aborted when the launch must stop waiting (timeout, shutdown). */
  readonly signal: AbortSignalLike;
  /**
   * The W3C trace context of the launch's span (`traceparent`, `tracestate`), for the target: empty or
   * absent when tracing is off (docs/operations.md#tracing).
   */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

/** What a launcher reports for a started run. */
export interface LaunchedRun {
  readonly targetRunId: string | null;
  /** The thread the target says it used; flagged when it differs from the requested one. */
  readonly threadId: string;
  /** A verdict already known at launch (a webhook's 2xx, a handler that finished). */
  readonly completion?: {
    readonly status: "succeeded" | "failed";
    readonly result?: JsonValue;
    readonly error?: string;
  };
}

/**
 * What a target says about a launched run when asked (docs/semantics.md#completion): still active, finished with a verdict
 * (a run that vanished from an agent server is a `cancelled` verdict), or no answer to be had now.
 */
export type RunObservation =
  | { readonly kind: "active" }
  | { readonly kind: "finished"; readonly verdict: CompletionVerdict }
  | { readonly kind: "unknown" };

/**
 * Starts runs on a target. May only fail with ThreadBusyError, LaunchFailedError (certainly nothing
 * started) or LaunchIndeterminateError (it may have started); cancellation propagates through `signal`.
 */
export interface RunLauncher {
  launch(request: LaunchRequest): Promise<LaunchedRun>;
  /** Asks the target to stop a run (agent cancel endpoint, webhook `cancel_url`, handler AbortSignal). */
  cancel(run: Run, task: Task): Promise<void>;
  /** After an uncertain launch: does the target show this run? `unknown` when it cannot be asked. */
  reconcile(run: Run, task: Task, signal: AbortSignalLike): Promise<ReconcileFinding>;
  /**
   * Whether runs of `task` are watched by polling the target (agent targets: the server is the source of
   * truth for completion, docs/semantics.md#completion). Absent or false: the target reports completion itself.
   */
  watches?(task: Task): boolean;
  /** How a launched run with a known `targetRunId` is doing on the target. Never throws. */
  observe?(run: Run, task: Task, signal: AbortSignalLike): Promise<RunObservation>;
  /**
   * How long after an uncertain launch (no target run id) the target may be searched for the run: the
   * request's own timeout, after which it can no longer be in flight.
   */
  reconcileDelayMs?(task: Task): number | undefined;
  /**
   * A launched run of `task` has ended (its terminal status is recorded): the target may tidy up after
   * it (an agent server deletes a fresh thread whose target asks for it). Never throws.
   */
  ended?(run: Run, task: Task): Promise<void>;
}

/** Whether a thread exists and is usable by an owner (one answer, so foreign threads cannot be probed). */
export interface ThreadLookup {
  threadExists(owner: OwnerId, threadScope: string, threadId: ThreadId): Promise<boolean>;
}
