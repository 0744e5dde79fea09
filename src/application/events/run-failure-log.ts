/**
 * Failures said out loud (docs/operations.md#logs): a run that fails, times out or loses its replica
 * writes one warn line naming the task, the run, the reason and the error, with any credentials a URL in
 * the error carries removed. The run ledger stays the record; this line is what an operator tails.
 */
import type { Run } from "../../domain/run.js";
import type { Logger } from "./logger.js";
import type { SchedulerEvents } from "./internal-events.js";

/** A URL's user, password and query string, which may hold a credential. */
const URL_SECRETS = /\b(https?:\/\/)(?:[^\s/@]*@)?([^\s?#]*)(?:[?#]\S*)?/gi;

/** `text` without a URL's user, password or query, at most 300 characters. */
export function redactedError(text: string): string {
  const redacted = text.replace(URL_SECRETS, "$1$2");
  return redacted.length > 300 ? `${redacted.slice(0, 299)}…` : redacted;
}

/** Whether `run`'s change from `from` is a failure worth a warn line. */
function isFailure(run: Run, from: Run["status"]): boolean {
  if (run.status === "failed" || run.status === "timed_out") return true;
  // A handler run its replica lost, queued again for its next attempt.
  return run.status === "queued" && from === "running" && run.reason === "replica_lost";
}

/** Logs every failure `events` report on `logger` at warn, one line a run change. */
export function logRunFailures(events: SchedulerEvents, logger: Logger): void {
  events.on("run:changed", ({ run, from, targetKind }) => {
    if (!isFailure(run, from)) return;
    logger.warn(
      {
        taskId: run.taskId,
        runId: run.id,
        status: run.status,
        reason: run.reason,
        attempt: run.attempt,
        target: targetKind,
        scheduledFor: new Date(run.scheduledFor).toISOString(),
        ...(run.error === null ? {} : { error: redactedError(run.error) }),
      },
      run.status === "queued"
        ? "run lost its replica: queued for another attempt"
        : run.status === "timed_out"
          ? "run timed out"
          : "run failed",
    );
  });
}
