/**
 * The run side of the owner's use cases: manual runs within the owner's rate quotas
 * (docs/security.md#quotas), a trigger counted against the runs admitted per minute on this replica
 * (the window the dispatcher shares) and a backfill against the backfilled runs per hour the store
 * counts; a run cancelled (docs/semantics.md#cancellation); one task's runs and one run read. The runs
 * themselves are written in manual-runs.ts.
 */
import { NotFoundError } from "../../domain/errors.js";
import type { RunId } from "../../domain/ids.js";
import type { RunQuery } from "../../domain/ports/queries.js";
import type { Run } from "../../domain/run.js";
import { runTaskContext } from "../../domain/run-change.js";
import { requestRunCancel } from "../../domain/run-transitions.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import { scopeOf } from "../access/actor.js";
import type { AdmissionWindow } from "../policy/admission-window.js";
import { backfillRuns, triggerRun } from "./manual-runs.js";
import type { ManualRunDeps } from "./manual-runs.js";
import { checkRate, HOUR_MS, MINUTE_MS, QUOTA_NAMES, Quotas } from "../policy/quotas.js";
import { changeRunReported } from "./reported-change.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import { runView } from "../shapes/view-mappers.js";
import type { PageView, RunView } from "../shapes/view-mappers.js";

/** What the run side needs of the service. */
export interface TaskRunDeps extends ManualRunDeps {
  /** Receives the status changes of runs the owner cancels. @default none */
  readonly events?: EventSink;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** Runs admitted per owner in the last minute on this replica, shared with the dispatcher. */
  readonly admissions?: AdmissionWindow;
}

/** Run `task` now, within the owner's runs per minute; a repeat with the same key returns the first run. */
export async function triggerWithinQuota(
  deps: TaskRunDeps,
  actor: Actor,
  task: Task,
  options: { idempotencyKey?: string },
  now: Instant,
): Promise<RunView> {
  const admissions = deps.admissions;
  if (admissions !== undefined) {
    const quotas = (deps.quotas ?? Quotas.UNLIMITED).of(actor.owner);
    const limit = {
      limit: QUOTA_NAMES.runsPerMinute,
      max: quotas.runsPerMinute,
      windowMs: MINUTE_MS,
    };
    checkRate(limit, admissions.count(actor.owner, now), 1);
  }
  const run = await triggerRun(deps, actor, task, options, now);
  admissions?.add(actor.owner, now, 1);
  return run;
}

/**
 * Replays nominal times in [from, to) of the owner's task `id` as `backfill` runs, within the owner's
 * backfilled runs per hour.
 * @throws quota_exceeded (`backfill_runs_per_hour`) when the owner would pass its hourly quota
 */
export async function backfillWithinQuota(
  deps: TaskRunDeps,
  actor: Actor,
  id: string,
  input: { from: unknown; to: unknown },
  now: Instant,
): Promise<{ runs: RunView[]; already_backfilled: number }> {
  const quotas = (deps.quotas ?? Quotas.UNLIMITED).of(actor.owner);
  const recent = await deps.store.runs.countRecentRuns(
    actor.owner,
    "backfill",
    (now - HOUR_MS) as Instant,
  );
  const limit = {
    limit: QUOTA_NAMES.backfillRunsPerHour,
    max: quotas.backfillRunsPerHour,
    windowMs: HOUR_MS,
  };
  return backfillRuns(deps, actor, id, input, now, (adding) => {
    checkRate(limit, recent, adding);
  });
}

/** One page of `task`'s runs (the caller found the task in the actor's scope). */
export async function listTaskRuns(
  deps: TaskRunDeps,
  actor: Actor,
  task: Task,
  query: RunQuery,
): Promise<PageView<RunView>> {
  const page = await deps.store.runs.listRuns(scopeOf(actor), task.id, query);
  return { items: page.items.map(runView), next_cursor: page.nextCursor };
}

/** The actor's run `id`. @throws not_found for a missing run or another owner's */
export async function findRun(deps: TaskRunDeps, actor: Actor, id: string): Promise<Run> {
  const run = await deps.store.runs.findRun(scopeOf(actor), id as RunId);
  if (run === null) throw new NotFoundError("run", id);
  return run;
}

/** Cancels a run: a queued run at once; a launched one is asked to stop. */
export async function cancelRun(
  deps: TaskRunDeps,
  actor: Actor,
  id: string,
  now: Instant,
): Promise<RunView> {
  const found = await findRun(deps, actor, id);
  const changed = await changeRunReported(
    deps.store.runs,
    deps.events ?? NO_EVENTS,
    found.id,
    {},
    (run, task) => requestRunCancel(run, now, runTaskContext(task)),
  );
  const run = changed?.change.run ?? found;
  if (changed?.change.cancelTarget === true) {
    deps.signals.cancelRequested(run, changed.task);
  }
  return runView(run);
}
