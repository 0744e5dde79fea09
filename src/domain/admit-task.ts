/**
 * One task's admission, complete (docs/architecture.md#admission): the decisions `admit` makes, turned
 * into the rows to write (the new runs, the active runs `cancel_other` cancels or asks to stop, the
 * task's schedule fields). A store runs `decide` under the task's row lock and writes what it is handed;
 * it never decides anything itself, and never imports the task commands.
 */
import { withinAdmissionQuota } from "./admission-quota.js";
import { admit } from "./admission.js";
import type { ActiveRunView, Admission, AdmissionMode, AdmissionTaskFields } from "./admission.js";
import { IllegalTransitionError } from "./errors.js";
import { newRunFromDecision } from "./new-run.js";
import type { NewRun } from "./new-run.js";
import type { Run } from "./run.js";
import { runTaskContext } from "./run-change.js";
import { cancelRun } from "./run-transitions.js";
import { threadScopeOf } from "./target.js";
import type { Task } from "./task.js";
import type { Instant } from "./time.js";

/** What one task's admission writes, in one transaction under its row lock. */
export interface AdmissionWrite {
  /** The task's schedule fields (status, next_run_at, decided_through, admitted_count, last_error). */
  readonly fields: AdmissionTaskFields;
  /** Queued runs and the skipped and missed records, without ids (the store mints them). */
  readonly newRuns: readonly NewRun[];
  /** Active runs (as read under the lock) cancelled, or asked to stop, by `cancel_other`. */
  readonly runUpdates: readonly Run[];
}

/** A task admitted: what admission decided (for metrics and events) and what to write. */
export interface AdmittedTask {
  readonly admission: Admission;
  readonly write: AdmissionWrite;
}

/** The read model admission needs of an active run. */
export function activeView(run: Run): ActiveRunView {
  if (run.status !== "queued" && run.status !== "launching" && run.status !== "running") {
    throw new IllegalTransitionError("run", run.status, "active");
  }
  return { id: run.id, status: run.status, cancelRequested: run.cancelRequestedAt !== null };
}

/** The rows an admission writes for `task`, with its cancellations applied to the active runs. */
export function admissionRows(
  task: Task,
  activeRuns: readonly Run[],
  admission: Admission,
  now: Instant,
): { newRuns: NewRun[]; runUpdates: Run[]; cancelTargets: Run[] } {
  const scope = { id: task.id, owner: task.owner, threadScope: threadScopeOf(task.target, task.owner) };
  const updates: Run[] = [];
  const targets: Run[] = [];
  for (const instruction of admission.cancellations) {
    const run = activeRuns.find((r) => r.id === instruction.runId);
    if (run === undefined) continue;
    const change = cancelRun(run, now, instruction.reason, runTaskContext(task));
    updates.push(change.run);
    if (change.cancelTarget === true) targets.push(change.run);
  }
  return {
    newRuns: admission.decisions.map((d) => newRunFromDecision(scope, d, now)),
    runUpdates: updates,
    cancelTargets: targets,
  };
}

/**
 * Admits `task` at `now` (docs/semantics.md#the-life-of-an-occurrence) given its active runs as read
 * under its row lock: every due nominal time decided, and the complete write.
 */
export function admitTask(
  task: Task,
  activeRuns: readonly Run[],
  now: Instant,
  mode?: AdmissionMode,
  queueAllowance = Number.POSITIVE_INFINITY,
): AdmittedTask & { readonly queued: number } {
  // docs/security.md#quotas: runs past the owner's allowance are decided skipped, reason quota.
  const { admission, queued } = withinAdmissionQuota(
    admit({
      task,
      now,
      activeRuns: activeRuns.map(activeView),
      ...(mode === undefined ? {} : { mode }),
    }),
    queueAllowance,
  );
  const rows = admissionRows(task, activeRuns, admission, now);
  return {
    admission,
    queued,
    write: { fields: admission.task, newRuns: rows.newRuns, runUpdates: rows.runUpdates },
  };
}
