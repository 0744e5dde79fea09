/**
 * The task repository port (docs/architecture.md#ports): creation, reads, owner commands under the row
 * lock, and admission. Methods that decide take a synchronous, pure `decide` function from the domain: the
 * adapter opens the transaction, locks the rows, calls `decide` with what it read, and writes exactly what
 * it returns; none writes a whole task back.
 */
import type { AdmissionWrite } from "../admit-task.js";
import type { OwnerId, RunId, TaskId } from "../ids.js";
import type { NewRun } from "../new-run.js";
import type { Run, RunTrigger } from "../run.js";
import type { Task } from "../task.js";
import type { Instant } from "../time.js";
import type { OwnerScope, Page, TaskQuery } from "./queries.js";
import type { ClaimRequest, ClaimedRun, RunRepository } from "./run-repository.js";

/** A task and its active runs, read under the task's row lock. */
export interface LockedTask {
  readonly task: Task;
  readonly activeRuns: readonly Run[];
  /**
   * The run `mutateTask` was asked to lock (`options.run`), read under the task's lock and then its own;
   * null when the task has no run of that id.
   */
  readonly run?: Run | null;
  /**
   * With `options.recentRuns`: the owner's runs of that trigger queued since that instant, counted in
   * the transaction under a lock that the owner's other counting commands wait for, on every replica
   * (a rate quota exact under concurrency: docs/security.md#quotas).
   */
  readonly recentRuns?: number;
  /**
   * With `options.admissions`, on a store that counts admissions across replicas: the runs the owner
   * was queued (scheduled and triggered) in the minute before `now`, on every replica, counted in the
   * transaction (docs/decisions.md#runs-per-minute-across-replicas). Absent where the store does not
   * count them: the caller counts on its replica.
   */
  readonly admittedLastMinute?: number;
}

/** `mutateTask`'s options. */
export interface MutateTaskOptions {
  /** A run of the task to lock and read too (`LockedTask.run`). */
  readonly run?: RunId;
  /** Count the owner's runs of `trigger` queued since `since` under the command's lock (`LockedTask.recentRuns`). */
  readonly recentRuns?: { readonly trigger: RunTrigger; readonly since: Instant };
  /** The owner's `runs_per_minute` at `now`: count its queued runs (`LockedTask.admittedLastMinute`). */
  readonly admissions?: { readonly perMinute: number; readonly now: Instant };
}

/**
 * The `runs_per_minute` quota, for a store that counts admissions across replicas
 * (docs/decisions.md#runs-per-minute-across-replicas).
 */
export interface AdmissionRate {
  /** The owner's runs per minute; `Number.MAX_SAFE_INTEGER` or more: no quota, nothing counted. */
  perMinute(owner: OwnerId): number;
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
  /**
   * Runs of this batch inserted already claimed by the caller (`claim` given to a store that fuses the
   * claim into admission, docs/storage.md#fused-admit-and-claim): launching, each with its task; they are
   * also in `queuedRuns` as decided. Given (empty when nothing was claimed) whenever the store fused the
   * claim in; absent from a store that cannot. @default none
   */
  readonly claimed?: readonly ClaimedRun[];
}

/**
 * A claim made in the admitting transaction (docs/storage.md#fused-admit-and-claim): the request, the
 * domain's selection and the transition, as `RunRepository.claimRuns` takes them. A store that cannot
 * fuse ignores it and claims nothing.
 */
export interface AdmissionClaim {
  readonly request: ClaimRequest;
  readonly select: Parameters<RunRepository["claimRuns"]>[1];
  readonly claim: Parameters<RunRepository["claimRuns"]>[2];
}

/**
 * The `tasks_per_owner` check an insert runs in its transaction: the owner, how many tasks it has (not
 * deleted) and how many the insert adds; it throws to refuse.
 */
export type TaskCountCheck = (owner: OwnerId, existing: number, adding: number) => void;

/**
 * Tasks: creation, reads, owner commands under the row lock, and admission.
 *
 * A task whose schedule names calendars holds a snapshot of each (name and version): `insertTask` writes
 * it, and `mutateTask` writes a changed one, only while each snapshot it brings is the calendar's current
 * version, checked in the same transaction (so a calendar edited or deleted meanwhile is never missed).
 */
export interface TaskRepository {
  /**
   * Inserts a new task. With `quota`, it is called in the inserting transaction with how many tasks
   * (not deleted) the owner has, under a lock on that count that concurrent inserts for the owner wait
   * for, on every replica: a refusal it throws writes nothing (the `tasks_per_owner` quota, exact
   * under concurrency: docs/security.md#quotas).
   * @throws version_conflict (CalendarChangedError) when a calendar it names is not at its snapshot's version
   * @throws key_taken when another task of the owner, not deleted, has its key
   */
  insertTask(task: Task, quota?: TaskCountCheck): Promise<void>;
  /**
   * Inserts every task in one transaction, all or none (docs/semantics.md#bulk-create): one bulk
   * statement, not a loop of single inserts. An empty list writes nothing. `quota` as for `insertTask`,
   * called once per owner of the batch.
   * @throws version_conflict (CalendarChangedError) when a calendar one of them names is not at its
   * snapshot's version; nothing is written then
   */
  insertTasks(tasks: readonly Task[], quota?: TaskCountCheck): Promise<void>;
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
    options?: MutateTaskOptions,
  ): Promise<T>;
  /**
   * Admits up to `limit` enabled tasks with `next_run_at <= now`, skipping rows other replicas hold and
   * tasks marked defective: for each, one transaction (or one per batch) that reads its active runs,
   * calls `decide`, and writes what it returns as it is: the new runs, the rewritten active runs and the
   * task's schedule fields. A due task read with a `defect` is not decided: the store marks it
   * (`defect_at = now`) and reports it in `defective`.
   *
   * With `rate`, a store that counts admissions across replicas gives `decide` the runs the task's owner
   * was queued in the minute before `now` on every replica, those of this batch decided before it
   * included, and may call `decide` again for a task when it admits the batch again; other stores give
   * `undefined` (the caller counts on its replica).
   *
   * With `claim`, a store that can inserts the new runs this replica may launch at once already claimed
   * (`claimed` in the report), chosen by `claim.select` as a claim would; the others are queued.
   */
  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[], admittedLastMinute?: number) => AdmissionWrite,
    rate?: AdmissionRate,
    claim?: AdmissionClaim,
  ): Promise<AdmissionReport>;
  /** The earliest `next_run_at` of an enabled task not marked defective, for the coordinator's sleep. */
  nextDueAt(): Promise<Instant | null>;
}
