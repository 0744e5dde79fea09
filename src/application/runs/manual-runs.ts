/**
 * The runs an owner asks for outside the schedule (docs/semantics.md#task-operations): a manual trigger
 * (one run now, idempotent on its key, superseding the active runs under `cancel_other`) and a backfill
 * (the nominal times of a past range, each at most once), both written under the task's row lock; and
 * each within the owner's rate quotas (docs/security.md#quotas), a trigger counted against the runs
 * admitted per minute (across replicas by a store that counts them, and on this replica in the window
 * the dispatcher shares) and a backfill against the backfilled runs per hour the store counts.
 */
import { taskId as toTaskId } from "../../domain/ids.js";
import { NotFoundError } from "../../domain/errors.js";
import { idempotencyKeyFor } from "../../domain/occurrence.js";
import type { Store } from "../../domain/ports/store.js";
import type { Run } from "../../domain/run.js";
import {
  backfillTask,
  supersededByTrigger,
  triggerTakingOccurrence,
  triggerTask,
  validateClientKey,
} from "../../domain/task-commands.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import { scopeOf } from "../access/actor.js";
import type { Actor } from "../access/actor.js";
import type { EventSink } from "../events/internal-events.js";
import type { AdmissionWindow } from "../policy/admission-window.js";
import { HOUR_MS, MINUTE_MS, QUOTA_NAMES, Quotas, checkRate } from "../policy/quotas.js";
import { instantFrom } from "../shapes/task-input.js";
import { runView } from "../shapes/view-mappers.js";
import type { RunView } from "../shapes/view-mappers.js";

/** What the manual runs need of the service. */
export interface ManualRunDeps {
  readonly store: Store;
  /** Mints default trigger keys. */
  readonly newId: () => string;
  readonly signals: {
    wake(): void;
    cancelRequested(run: Run, task: Task): void;
  };
}

/** What the run side needs of the service. */
export interface TaskRunDeps extends ManualRunDeps {
  /** Receives the status changes of runs the owner cancels. @default none */
  readonly events?: EventSink;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** Runs admitted per owner in the last minute on this replica, shared with the dispatcher. */
  readonly admissions?: AdmissionWindow;
}

/** How a trigger runs the task. */
export interface TriggerOptions {
  readonly idempotencyKey?: string;
  /**
   * The run takes a once task's occurrence (`triggerTakingOccurrence`): the DeerFlow-compatible API's
   * trigger (docs/targets.md#a-deerflow-compatible-api). punctual's own trigger never does. @default false
   */
  readonly takeOccurrence?: boolean;
}

/** Run `task` now: a manual occurrence; a repeat with the same key returns the first run. */
export async function triggerRun(
  deps: ManualRunDeps,
  actor: Actor,
  task: Task,
  options: TriggerOptions,
  now: Instant,
  rate?: { readonly perMinute: number; readonly check: (recent: number) => void },
): Promise<RunView> {
  const clientKey = options.idempotencyKey ?? deps.newId();
  validateClientKey(clientKey);
  const key = idempotencyKeyFor(task.id, "manual", clientKey);
  const existing = await deps.store.runs.findManualRun(task.id, key);
  if (existing !== null) return runView(existing);
  const { run, superseded } = await deps.store.tasks.mutateTask(
    scopeOf(actor),
    task.id,
    (locked) => {
      // Refused inside the transaction, on the count the store took there across replicas: nothing is
      // written (docs/security.md#quotas).
      if (rate !== undefined && locked.admittedLastMinute !== undefined) {
        rate.check(locked.admittedLastMinute);
      }
      const ctx = { now, clientKey };
      const { task: taken, newRun } =
        options.takeOccurrence === true
          ? triggerTakingOccurrence(locked.task, locked.activeRuns, ctx)
          : { task: locked.task, newRun: triggerTask(locked.task, locked.activeRuns, ctx) };
      // A repeat of a trigger still active is that trigger: it supersedes nothing (and not itself).
      const repeat = locked.activeRuns.some((r) => r.idempotencyKey === newRun.idempotencyKey);
      const others = repeat
        ? { task: taken, runUpdates: [], cancelTargets: [] }
        : supersededByTrigger(taken, locked.activeRuns, now);
      return {
        ...(others.task === locked.task ? {} : { task: others.task }),
        newRuns: [newRun],
        runUpdates: others.runUpdates,
        result: (inserted) => ({
          run: inserted[0] ?? null,
          // A trigger that lost the race on its key changed nothing (the store wrote nothing).
          superseded: inserted[0] === null ? [] : others.cancelTargets,
        }),
      };
    },
    rate === undefined ? {} : { admissions: { perMinute: rate.perMinute, now } },
  );
  for (const stopped of superseded) deps.signals.cancelRequested(stopped, task);
  deps.signals.wake();
  if (run !== null) return runView(run);
  // Another request with the same key won the race: answer with its run.
  const winner = await deps.store.runs.findManualRun(task.id, key);
  if (winner === null) throw new NotFoundError("run", key);
  return runView(winner);
}

/** Replays nominal times in [from, to) as `backfill` runs; times already backfilled are not repeated. */
export async function backfillRuns(
  deps: ManualRunDeps,
  actor: Actor,
  id: string,
  input: { from: unknown; to: unknown },
  now: Instant,
  quota?: { readonly since: Instant; readonly check: (recent: number, adding: number) => void },
): Promise<{ runs: RunView[]; already_backfilled: number }> {
  const from = instantFrom(input.from, "from");
  const to = instantFrom(input.to, "to");
  const result = await deps.store.tasks.mutateTask(
    scopeOf(actor),
    toTaskId(id),
    (locked) => {
      const newRuns = backfillTask(locked.task, { now, from, to });
      // Refused inside the transaction, on the count taken there: nothing is written
      // (docs/security.md#quotas).
      quota?.check(locked.recentRuns ?? 0, newRuns.length);
      return { newRuns, result: (inserted) => inserted };
    },
    quota === undefined ? {} : { recentRuns: { trigger: "backfill", since: quota.since } },
  );
  deps.signals.wake();
  const runs = result.filter((r): r is Run => r !== null);
  return { runs: runs.map(runView), already_backfilled: result.length - runs.length };
}

/** Run `task` now, within the owner's runs per minute; a repeat with the same key returns the first run. */
export async function triggerWithinQuota(
  deps: TaskRunDeps,
  actor: Actor,
  task: Task,
  options: TriggerOptions,
  now: Instant,
): Promise<RunView> {
  const admissions = deps.admissions;
  const perMinute = (deps.quotas ?? Quotas.UNLIMITED).of(actor.owner).runsPerMinute;
  const limit = { limit: QUOTA_NAMES.runsPerMinute, max: perMinute, windowMs: MINUTE_MS };
  if (admissions !== undefined) {
    // Counted and taken in one synchronous step, before any await: concurrent triggers on this
    // replica each see the ones before them (docs/security.md#quotas); a trigger that fails gives it back.
    checkRate(limit, admissions.count(actor.owner, now), 1);
    admissions.add(actor.owner, now, 1);
  }
  try {
    return await triggerRun(deps, actor, task, options, now, {
      perMinute,
      check: (recent) => {
        checkRate(limit, recent, 1);
      },
    });
  } catch (error) {
    admissions?.release(actor.owner, now, 1);
    throw error;
  }
}

/**
 * Replays nominal times in [from, to) of the owner's task `id` as `backfill` runs, within the owner's
 * backfilled runs per hour, counted in the backfill's transaction under a lock on the owner's count:
 * exact on every replica (docs/security.md#quotas).
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
  // No quota (the library's default): nothing to count, no lock to take.
  if (quotas.backfillRunsPerHour >= Number.MAX_SAFE_INTEGER) {
    return backfillRuns(deps, actor, id, input, now);
  }
  const limit = {
    limit: QUOTA_NAMES.backfillRunsPerHour,
    max: quotas.backfillRunsPerHour,
    windowMs: HOUR_MS,
  };
  return backfillRuns(deps, actor, id, input, now, {
    since: (now - HOUR_MS) as Instant,
    check: (recent, adding) => {
      checkRate(limit, recent, adding);
    },
  });
}
