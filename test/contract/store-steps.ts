/**
 * The steps the service and the coordinator take against a store, written with the domain's functions as
 * the `decide` callbacks exactly as the application does, so that the contract exercises real decisions.
 */
import { admitTask } from "../../src/domain/admit-task.js";
import { selectClaimable } from "../../src/domain/claim.js";
import type { OwnerShare } from "../../src/domain/claim.js";
import type { RunId, TaskId } from "../../src/domain/ids.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import type { CatchUpPolicy } from "../../src/domain/options.js";
import type {
  AdmissionClaim,
  AdmissionReport,
  TaskMutation,
} from "../../src/domain/ports/task-repository.js";
import type { ClaimedRun, RunChangeRequest } from "../../src/domain/ports/run-repository.js";
import type { OwnerScope } from "../../src/domain/ports/queries.js";
import type { Run } from "../../src/domain/run.js";
import {
  applyLaunchOutcome,
  cancelRun,
  claimRun,
  completeRun,
} from "../../src/domain/run-transitions.js";
import { runTaskContext } from "../../src/domain/run-change.js";
import type {
  CompletionVerdict,
  LaunchOutcome,
  RunChange,
  RunTaskContext,
} from "../../src/domain/run-change.js";
import {
  backfillTask,
  deleteTask,
  pauseTask,
  resumeTask,
  triggerTakingOccurrence,
  triggerTask,
} from "../../src/domain/task-commands.js";
import { editTask } from "../../src/domain/task-fields.js";
import type { CommandOutcome } from "../../src/domain/task-commands.js";
import type { Task, TaskUserFields } from "../../src/domain/task.js";
import type { DurationMs, Instant } from "../../src/domain/time.js";
import type { Store } from "../../src/domain/ports/store.js";
import { ALL, buildTask } from "./fixtures.js";
import type { TaskFixture } from "./fixtures.js";

export const REPLICA = "replica-a";
export const POLICY = DEFAULT_POLICY;

export { runTaskContext };

/** Builds and inserts tasks, returning them as inserted. */
export async function insertTasks(store: Store, ...fixtures: TaskFixture[]): Promise<Task[]> {
  const tasks = fixtures.map((fixture) => buildTask(fixture));
  for (const task of tasks) await store.tasks.insertTask(task);
  return tasks;
}

export async function insertTask(store: Store, fixture: TaskFixture = {}): Promise<Task> {
  const [task] = await insertTasks(store, fixture);
  return task!;
}

/** The coordinator's admission step. */
export function admitDue(store: Store, now: Instant, limit = 100): Promise<AdmissionReport> {
  return store.tasks.admitDueTasks(
    now,
    limit,
    (task, activeRuns) => admitTask(task, activeRuns, now).write,
  );
}

export interface ClaimOptions {
  readonly limit?: number;
  readonly maxConcurrentRuns?: number;
  readonly handlerNames?: ReadonlySet<string>;
  readonly replicaId?: string;
  readonly leaseMs?: DurationMs;
  /** The owners' share of the budget (docs/semantics.md#fair-share). @default none */
  readonly share?: OwnerShare;
}

/** The coordinator's claim step: the domain's FIFO and overlap rules, the domain's claim. */
export function claimDue(
  store: Store,
  now: Instant,
  options: ClaimOptions = {},
): Promise<readonly ClaimedRun[]> {
  const { request, select, claim } = claimArgs(now, options);
  return store.runs.claimRuns(request, select, claim);
}

/**
 * The coordinator's admission with the claim fused in (docs/storage.md#fused-admit-and-claim): a store
 * that can claims the new runs it may launch at once in the admitting transaction (`claimed`).
 */
export function admitAndClaim(
  store: Store,
  now: Instant,
  options: ClaimOptions & { readonly batch?: number } = {},
): Promise<AdmissionReport> {
  return store.tasks.admitDueTasks(
    now,
    options.batch ?? 100,
    (task, activeRuns) => admitTask(task, activeRuns, now).write,
    undefined,
    claimArgs(now, options),
  );
}

/** The request, selection and transition of a claim, as the application builds them. */
function claimArgs(now: Instant, options: ClaimOptions): AdmissionClaim {
  const handlerNames = options.handlerNames ?? new Set<string>();
  const replicaId = options.replicaId ?? REPLICA;
  const leaseMs = options.leaseMs ?? POLICY.leaseMs;
  return {
    request: {
      now,
      replicaId,
      leaseMs,
      maxConcurrentRuns: options.maxConcurrentRuns ?? POLICY.maxConcurrentRuns,
      limit: options.limit ?? 10,
      handlerNames,
      ...(options.share === undefined ? {} : { share: options.share }),
    },
    select: (input) =>
      selectClaimable({
        ...input,
        now,
        handlerNames,
        ...(options.share === undefined ? {} : { share: options.share }),
      }),
    claim: (run, task, token) => claimRun(run, { now, token, leaseMs, replicaId }, task.options),
  };
}

/**
 * One run changed through `changeRuns`, a batch of one, as the application changes a single run
 * (src/application/runs/reported-change.ts): the change, null when `decide` changed nothing, a refusal
 * thrown.
 */
export async function changeOne(
  store: Store,
  request: RunChangeRequest,
): Promise<RunChange | null> {
  const results = await store.runs.changeRuns([request]);
  const [result] = results;
  if (results.length !== 1 || result === undefined) throw new Error("one request, one result");
  if (result.kind === "refused") throw result.error;
  return result.kind === "changed" ? result.change : null;
}

/** Records a launch outcome, fenced by the claim's token. */
export function recordLaunch(
  store: Store,
  claimed: ClaimedRun | Run,
  now: Instant,
  outcome: LaunchOutcome = { kind: "launched", targetRunId: "target-run" },
): Promise<RunChange | null> {
  const run = "run" in claimed ? claimed.run : claimed;
  const token = run.claimToken ?? undefined;
  const decide = (current: Run, task: RunTaskContext) =>
    applyLaunchOutcome(current, outcome, { now, task, policy: POLICY });
  return changeOne(
    store,
    token === undefined ? { id: run.id, decide } : { id: run.id, token, decide },
  );
}

/** Claims whatever is claimable at `now` and records each as launched. */
export async function claimAndLaunch(
  store: Store,
  now: Instant,
  options: ClaimOptions = {},
): Promise<Run[]> {
  const launched: Run[] = [];
  for (const claimed of await claimDue(store, now, options)) {
    const change = await recordLaunch(store, claimed, now);
    launched.push(change!.run);
  }
  return launched;
}

/** Records a verdict from the target, unfenced (webhook completions carry no claim token). */
export function recordCompletion(
  store: Store,
  runId: RunId,
  verdict: CompletionVerdict,
  now: Instant,
): Promise<RunChange | null> {
  return changeOne(store, {
    id: runId,
    decide: (run, task) => completeRun(run, verdict, { now, task }),
  });
}

/** Cancels a run as the service does: with its whole task (whether its target can be told to stop). */
export function cancelOneRun(store: Store, runId: RunId, now: Instant): Promise<RunChange | null> {
  return changeOne(store, {
    id: runId,
    withTask: true,
    decide: (run, task) => cancelRun(run, now, "cancel_requested", task),
  });
}

/** What a task command writes, as a `TaskMutation` returning the inserted runs. */
export function commandMutation(
  outcome: CommandOutcome,
  expectedVersion?: number,
): TaskMutation<readonly (Run | null)[]> {
  return {
    task: outcome.task,
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
    newRuns: outcome.newRuns,
    runUpdates: outcome.runUpdates,
    result: (inserted) => inserted,
  };
}

export function triggerRun(
  store: Store,
  scope: OwnerScope,
  id: TaskId,
  clientKey: string,
  now: Instant,
): Promise<Run | null> {
  return store.tasks.mutateTask(scope, id, ({ task, activeRuns }) => ({
    newRuns: [triggerTask(task, activeRuns, { now, clientKey })],
    result: ([run]) => run ?? null,
  }));
}

/** A trigger that takes a once task's occurrence (the DeerFlow-compatible API's), the task written too. */
export function triggerTakingRun(
  store: Store,
  scope: OwnerScope,
  id: TaskId,
  clientKey: string,
  now: Instant,
): Promise<Run | null> {
  return store.tasks.mutateTask(scope, id, ({ task, activeRuns }) => {
    const taken = triggerTakingOccurrence(task, activeRuns, { now, clientKey });
    return { task: taken.task, newRuns: [taken.newRun], result: ([run]) => run ?? null };
  });
}

export function backfillRuns(
  store: Store,
  scope: OwnerScope,
  id: TaskId,
  range: { readonly from: Instant; readonly to: Instant },
  now: Instant,
): Promise<readonly (Run | null)[]> {
  return store.tasks.mutateTask(scope, id, ({ task }) => ({
    newRuns: backfillTask(task, { now, ...range }),
    result: (inserted) => inserted,
  }));
}

export function pause(
  store: Store,
  id: TaskId,
  now: Instant,
  cancelRunning = false,
): Promise<readonly (Run | null)[]> {
  return store.tasks.mutateTask(ALL, id, ({ task, activeRuns }) =>
    commandMutation(pauseTask(task, activeRuns, { now, cancelRunning })),
  );
}

export function resume(
  store: Store,
  id: TaskId,
  now: Instant,
  catchUp: CatchUpPolicy,
): Promise<readonly (Run | null)[]> {
  return store.tasks.mutateTask(ALL, id, ({ task, activeRuns }) =>
    commandMutation(resumeTask(task, activeRuns, { now, catchUp })),
  );
}

export function edit(
  store: Store,
  scope: OwnerScope,
  id: TaskId,
  patch: Partial<TaskUserFields>,
  now: Instant,
  expectedVersion?: number,
): Promise<readonly (Run | null)[]> {
  return store.tasks.mutateTask(scope, id, ({ task }) =>
    commandMutation(
      {
        task: editTask(task, patch, { now, policy: POLICY }),
        newRuns: [],
        runUpdates: [],
        cancelTargets: [],
      },
      expectedVersion,
    ),
  );
}

export function remove(
  store: Store,
  id: TaskId,
  now: Instant,
  force = false,
): Promise<readonly (Run | null)[]> {
  return store.tasks.mutateTask(ALL, id, ({ task, activeRuns }) =>
    commandMutation(deleteTask(task, activeRuns, { now, force })),
  );
}

/** Every run of a task, newest first, read page by page. */
export async function ledger(store: Store, id: TaskId): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.runs.listRuns(ALL, id, {
      limit: 200,
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return runs;
}

/** Scheduled decisions of a task, oldest first. */
export async function scheduledDecisions(store: Store, id: TaskId): Promise<Run[]> {
  const runs = await ledger(store, id);
  return runs.filter((run) => run.trigger === "scheduled").reverse();
}

/** The task as stored, whatever its owner (throws when it is invisible). */
export async function reload(store: Store, id: TaskId): Promise<Task> {
  const task = await store.tasks.findTask(ALL, id);
  if (task === null) throw new Error(`task ${id} is not visible`);
  return task;
}

export async function reloadRun(store: Store, id: RunId): Promise<Run> {
  const run = await store.runs.findRun(ALL, id);
  if (run === null) throw new Error(`run ${id} is not visible`);
  return run;
}
