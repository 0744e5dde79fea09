/**
 * The admission rate quota (docs/security.md#quotas): of the runs an admission queues, those past the
 * owner's allowance are decided `skipped` with reason `quota` instead (never silently absent). The
 * allowance is given: the caller counts what the owner was admitted in the last minute.
 */
import type { Admission, Decision } from "./admission.js";

/**
 * `admission` with at most `allowance` queued runs (in nominal order); the rest become `quota` skips.
 * Returns the admission and how many runs it still queues.
 */
export function withinAdmissionQuota(
  admission: Admission,
  allowance: number,
): { readonly admission: Admission; readonly queued: number } {
  let queued = 0;
  let skipped = 0;
  const decisions: Decision[] = [];
  for (const decision of admission.decisions) {
    if (decision.kind !== "queue") {
      decisions.push(decision);
    } else if (queued < allowance) {
      queued++;
      decisions.push(decision);
    } else {
      skipped++;
      decisions.push({
        kind: "skip",
        scheduledFor: decision.scheduledFor,
        fireAt: decision.fireAt,
        reason: "quota",
      });
    }
  }
  return { admission: skipped > 0 ? { ...admission, decisions } : admission, queued };
}
