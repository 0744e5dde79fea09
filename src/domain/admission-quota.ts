/**
 * The admission rate quota (docs/security.md#quotas): of the runs an admission queues, those past the
 * owner's allowance are recorded `skipped` with reason `quota` instead (never silently absent). The
 * allowance is given: the caller counts what the owner was admitted in the last minute.
 */
import type { AdmissionWrite } from "./admit-task.js";
import type { NewRun } from "./new-run.js";
import type { Instant } from "./time.js";

/** A queued scheduled run as the record of an occurrence skipped for its owner's quota. */
function skippedForQuota(run: NewRun, now: Instant): NewRun {
  return {
    ...run,
    status: "skipped",
    reason: "quota",
    threadId: null,
    exclusive: false,
    finishedAt: now,
  };
}

/**
 * `write` with at most `allowance` queued runs (in nominal order); the rest become `quota` skips.
 * Returns the write and how many runs it still queues.
 */
export function withinAdmissionQuota(
  write: AdmissionWrite,
  allowance: number,
  now: Instant,
): { readonly write: AdmissionWrite; readonly queued: number } {
  let queued = 0;
  let skipped = 0;
  const newRuns: NewRun[] = [];
  for (const run of write.newRuns) {
    if (run.status === "queued" && queued >= allowance) {
      skipped++;
      newRuns.push(skippedForQuota(run, now));
      continue;
    }
    if (run.status === "queued") queued++;
    newRuns.push(run);
  }
  return { write: skipped > 0 ? { ...write, newRuns } : write, queued };
}
