/**
 * Cancelling a run (docs/semantics.md#cancellation): a queued run at once, a launched one asked to stop
 * through its launcher.
 */
import { requestRunCancel } from "../../domain/run-transitions.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import { NO_EVENTS } from "../events/internal-events.js";
import { runView } from "../shapes/view-mappers.js";
import type { RunView } from "../shapes/view-mappers.js";
import { findRun } from "./find-runs.js";
import type { TaskRunDeps } from "./manual-runs.js";
import { changeRunReported } from "./reported-change.js";

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
    (run, task) => requestRunCancel(run, now, task),
  );
  // requestRunCancel answers a change or throws, and a run gone meanwhile is not_found: never null.
  /* v8 ignore next */
  const run = changed?.change.run ?? found;
  if (changed?.change.cancelTarget === true) {
    deps.signals.cancelRequested(run, changed.task);
  }
  return runView(run);
}
