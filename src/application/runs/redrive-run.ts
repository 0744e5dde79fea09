/**
 * Redrive (docs/semantics.md#redrive, docs/api.md `POST /v1/runs/{id}/retry`): an ended run back in the
 * queue as its next attempt, decided by the domain under its task's row lock.
 */
import { NotFoundError, RunNotRedrivableError } from "../../domain/errors.js";
import type { RunId } from "../../domain/ids.js";
import type { Store } from "../../domain/ports/store.js";
import type { Run } from "../../domain/run.js";
import { redriveTaskRun } from "../../domain/task-commands.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import { scopeOf } from "../access/actor.js";
import type { Actor } from "../access/actor.js";
import type { EventSink } from "../events/internal-events.js";
import { reportRunChanged } from "./reported-change.js";
import { runView } from "../shapes/view-mappers.js";
import type { RunView } from "../shapes/view-mappers.js";

/** What the run operations need of the service. */
export interface RunOperationDeps {
  readonly store: Store;
  readonly signals: {
    wake(): void;
    cancelRequested(run: Run, task: Task): void;
  };
  readonly events: EventSink;
}

/**
 * Redrive: puts a failed, timed-out or cancelled run back in the queue as its next attempt, under its
 * task's row lock (docs/semantics.md#redrive).
 * @throws not_found for a missing run or another owner's
 * @throws illegal_transition (saying why) when the run is not failed, timed_out or cancelled, or its
 * task was deleted
 * @throws run_active under overlap `skip` while the task has an active run
 */
export async function redriveRun(
  deps: RunOperationDeps,
  actor: Actor,
  id: RunId,
  now: Instant,
): Promise<RunView> {
  const found = await deps.store.runs.findRun(scopeOf(actor), id);
  if (found === null) throw new NotFoundError("run", id);
  const outcome = await deps.store.tasks
    .mutateTask(
      scopeOf(actor),
      found.taskId,
      (locked) => {
        // Purged between the read and the lock: gone.
        const run = locked.run;
        if (run === undefined || run === null) throw new NotFoundError("run", id);
        const decided = redriveTaskRun(locked.task, locked.activeRuns, run, now);
        return {
          ...(decided.task === locked.task ? {} : { task: decided.task }),
          runUpdates: decided.runUpdates,
          result: () => ({ ...decided, from: run.status, task: locked.task }),
        };
      },
      { run: found.id },
    )
    .catch((error: unknown) => {
      // The run is still there (it was just read) but its task is gone: a deleted task's run stays ended.
      if (error instanceof NotFoundError && error.resource === "task") {
        throw new RunNotRedrivableError(found.id, found.status, "its task was deleted");
      }
      throw error;
    });
  // Redrive always moves an ended run to queued: a status change, reported.
  reportRunChanged(deps.events, outcome.run, outcome.from, outcome.task.target.kind);
  for (const stopped of outcome.cancelTargets) deps.signals.cancelRequested(stopped, outcome.task);
  deps.signals.wake();
  return runView(outcome.run);
}
