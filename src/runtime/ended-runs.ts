/**
 * After a launched agent run has ended, its launcher may tidy up on the target (docs/targets.md#langgraph-crons:
 * a LangGraph stateless cron's fresh thread is deleted unless its target keeps it). The process that
 * records the end does it, once: it listens to its own `run:changed` events and acts after the write
 * that emitted them, so a store transaction never waits on an agent server. Best effort: a failed
 * clean-up is logged and never changes the run.
 */
import type { Logger } from "../application/events/logger.js";
import type { SchedulerEvents } from "../application/events/internal-events.js";
import type { Store } from "../domain/ports/store.js";
import type { RunLauncher } from "../domain/ports/run-launcher.js";
import { isTerminalRunStatus } from "../domain/run.js";

export interface EndedRunsDeps {
  readonly events: SchedulerEvents;
  readonly store: Store;
  readonly launcher: RunLauncher;
  readonly logger: Logger;
}

/** Starts listening; returns the function that stops it. */
export function tidyAfterEndedRuns(deps: EndedRunsDeps): () => void {
  const { events, store, launcher, logger } = deps;
  if (launcher.ended === undefined) return () => undefined;
  const ended = launcher.ended.bind(launcher);
  return events.on("run:changed", ({ run, targetKind }) => {
    if (targetKind !== "agent" || !isTerminalRunStatus(run.status)) return;
    if (run.targetRunId === null && run.launchedAt === null) return;
    setImmediate(() => {
      void (async () => {
        const task = await store.tasks.findTask({ kind: "all" }, run.taskId);
        if (task !== null) await ended(run, task);
      })().catch((error: unknown) => {
        logger.warn({ err: error, runId: run.id }, "could not tidy up after an ended run");
      });
    });
  });
}
