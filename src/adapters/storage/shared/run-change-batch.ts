/**
 * The fenced run-write protocol's decisions, shared by every store: the fence of one request (the run
 * found, its claim token still the one given) and `changeRuns`'s read-check-decide (`applyRunChanges`:
 * given the runs and tasks the adapter has locked, or read under its write lock, applies each request in
 * order and says what to write). The stores supply only their reads and writes
 * (`<store>-fenced-run-writes.ts`). Nothing here writes or touches a clock.
 */
import { IllegalTransitionError, LeaseLostError, NotFoundError } from "../../../domain/errors.js";
import { isPunctualError } from "../../../domain/errors.js";
import type { PunctualError } from "../../../domain/errors.js";
import type { FencingToken, RunId, TaskId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import type { RunChange, RunTaskContext } from "../../../domain/run-change.js";
import type { Task, TaskStatus } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";

/** A run the batch changed: as read, and as it ends the batch. */
export interface ChangedRunRow {
  readonly before: Run;
  readonly after: Run;
}

/**
 * What the batch writes on one task: launch bookkeeping (`last_run_*`, `run_count + launches`) and verdict
 * fields (`last_error`, and `status` when a verdict set it), each only when some request recorded one.
 */
export interface TaskBookkeeping {
  readonly taskId: TaskId;
  readonly launch: { readonly lastRunAt: Instant; readonly lastRunId: RunId } | null;
  readonly launches: number;
  readonly verdict: {
    readonly lastError: string | null;
    readonly status: TaskStatus | null;
  } | null;
}

/** The bookkeeping one change writes on its task (what a batch adds up per task). */
export function taskBookkeepingOf(taskId: TaskId, change: RunChange): TaskBookkeeping {
  const launch = change.taskLaunch;
  const verdict = change.taskVerdict;
  return {
    taskId,
    launch:
      launch === undefined ? null : { lastRunAt: launch.lastRunAt, lastRunId: launch.lastRunId },
    launches: launch?.runCountIncrement ?? 0,
    verdict:
      verdict === undefined
        ? null
        : { lastError: verdict.lastError, status: verdict.status ?? null },
  };
}

export interface AppliedRunChanges {
  readonly results: RunChangeResult[];
  /** Runs to write, in id order. */
  readonly runs: ChangedRunRow[];
  /** Tasks to write, in id order. */
  readonly tasks: TaskBookkeeping[];
}

/** Fields fixed when a run is admitted: a run change never writes them. */
const IDENTITY_FIELDS = [
  "taskId",
  "owner",
  "trigger",
  "scheduledFor",
  "fireAt",
  "missedCount",
  "missedUntil",
  "threadScope",
  "threadId",
  "exclusive",
  "idempotencyKey",
  "queuedAt",
  "moved",
] as const satisfies readonly (keyof Run)[];

/** The run fields a change may write (everything but the id and the identity fields). */
export const RUN_STATE_FIELDS = [
  "status",
  "reason",
  "attempt",
  "failures",
  "notBefore",
  "claimToken",
  "claimExpiresAt",
  "claimedBy",
  "targetRunId",
  "launchedAt",
  "deadlineAt",
  "finishedAt",
  "latenessMs",
  "late",
  "cancelRequestedAt",
  "error",
  "result",
] as const satisfies readonly (keyof Run)[];

/**
 * The fence of one change: not_found when the run is not there, lease_lost when `token` is given and is
 * no longer the run's claim token (superseded by a later claim, or released); null when it holds.
 */
export function fenceRefusal(
  id: RunId,
  run: Run | undefined,
  token: FencingToken | undefined,
): PunctualError | null {
  if (run === undefined) return new NotFoundError("run", id);
  if (token !== undefined && run.claimToken !== token) {
    return new LeaseLostError(`the claim on run ${id} was superseded or released`);
  }
  return null;
}

/** Whether a request of the batch asks for its run's whole task (`RunChangeRequest.withTask`). */
export function wantsWholeTasks(requests: readonly RunChangeRequest[]): boolean {
  return requests.some((r) => r.withTask === true);
}

/** What a batch's writers know of its runs (`RunChangeRequest.expect`), by run. */
export interface BatchExpectations {
  readonly runs: Map<RunId, Run>;
  /** The contexts of the expected runs' tasks: one per task. */
  readonly tasks: Map<TaskId, RunTaskContext>;
  /** The task version each expected run was decided on. */
  readonly versions: Map<RunId, number>;
}

/**
 * The runs whose first request of the batch carries an expectation, their tasks' contexts, and the task
 * version each was decided on. A run whose task another expected run of the batch has at another
 * version is left out (one context per task): the store reads it.
 */
export function batchExpectations(requests: readonly RunChangeRequest[]): BatchExpectations {
  const runs = new Map<RunId, Run>();
  const tasks = new Map<TaskId, RunTaskContext>();
  const versions = new Map<RunId, number>();
  const taskVersions = new Map<TaskId, number>();
  const seen = new Set<RunId>();
  for (const request of requests) {
    if (seen.has(request.id)) continue;
    seen.add(request.id);
    const e = request.expect;
    if (e?.run.id !== request.id) continue;
    const version = taskVersions.get(e.run.taskId);
    if (version !== undefined && version !== e.taskVersion) continue;
    taskVersions.set(e.run.taskId, e.taskVersion);
    tasks.set(e.run.taskId, e.task);
    runs.set(request.id, e.run);
    versions.set(request.id, e.taskVersion);
  }
  return { runs, tasks, versions };
}

/** The distinct run ids of a batch, in id order: the order the adapter locks them in. */
export function batchRunIds(requests: readonly RunChangeRequest[]): RunId[] {
  return [...new Set(requests.map((r) => r.id))].sort(compareIds);
}

/**
 * Applies `requests` in order over `runs` and their tasks' contexts (read under lock). Each request sees
 * the run as the requests before it left them (a run change never changes a task's schedule type or
 * options). A refused request (lease_lost, not_found, a transition `decide` refuses) changes nothing;
 * any other throw from `decide` is a bug and propagates. `wholeTasks` (read when `wantsWholeTasks`, the
 * contexts then made from them) gives a changed request that has `withTask` its task.
 */
export function applyRunChanges(
  requests: readonly RunChangeRequest[],
  runs: ReadonlyMap<RunId, Run>,
  tasks: ReadonlyMap<TaskId, RunTaskContext>,
  wholeTasks?: ReadonlyMap<TaskId, Task>,
): AppliedRunChanges {
  const current = new Map(runs);
  const changed = new Map<RunId, ChangedRunRow>();
  const bookkeeping = new Map<TaskId, TaskBookkeeping>();
  const results = requests.map((request): RunChangeResult => {
    const run = current.get(request.id);
    const refusal = fenceRefusal(request.id, run, request.token);
    if (refusal !== null || run === undefined) {
      return refused(refusal ?? new NotFoundError("run", request.id));
    }
    const task = tasks.get(run.taskId);
    if (task === undefined) return refused(new NotFoundError("run", request.id));
    let decided;
    try {
      decided = request.decide(run, task);
    } catch (error) {
      if (isPunctualError(error)) return refused(error);
      throw error;
    }
    if (decided === null) return { kind: "unchanged" };
    // The run `decide` made is kept as it is when it has the run's id (a transition copies it): no copy
    // of 31 fields per request.
    const after: Run = decided.run.id === run.id ? decided.run : { ...decided.run, id: run.id };
    if (changesIdentity(run, after)) {
      return refused(new IllegalTransitionError("run", run.status, "a change of its identity"));
    }
    current.set(run.id, after);
    changed.set(run.id, { before: changed.get(run.id)?.before ?? run, after });
    const one = taskBookkeepingOf(run.taskId, decided);
    const entry = bookkeeping.get(run.taskId);
    bookkeeping.set(
      run.taskId,
      entry === undefined
        ? one
        : {
            taskId: run.taskId,
            launch: one.launch ?? entry.launch,
            launches: entry.launches + one.launches,
            verdict:
              one.verdict === null
                ? entry.verdict
                : {
                    lastError: one.verdict.lastError,
                    status: one.verdict.status ?? entry.verdict?.status ?? null,
                  },
          },
    );
    const change = after === decided.run ? decided : { ...decided, run: after };
    const whole = request.withTask === true ? wholeTasks?.get(run.taskId) : undefined;
    return whole === undefined
      ? { kind: "changed", change }
      : { kind: "changed", change, task: whole };
  });
  return {
    results,
    runs: [...changed.values()].sort((a, b) => compareIds(a.after.id, b.after.id)),
    tasks: [...bookkeeping.values()]
      .filter((t) => t.launch !== null || t.verdict !== null)
      .sort((a, b) => compareIds(a.taskId, b.taskId)),
  };
}

/** Whether `after` differs from `before` in a field fixed at admission (a loop: no closure per request). */
function changesIdentity(before: Run, after: Run): boolean {
  for (const field of IDENTITY_FIELDS) if (after[field] !== before[field]) return true;
  return false;
}

function refused(error: PunctualError): RunChangeResult {
  return { kind: "refused", error };
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
