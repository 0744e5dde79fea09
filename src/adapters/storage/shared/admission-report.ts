/** The report every store gives for an admission batch, from what it wrote. */
import type { AdmissionReport } from "../../../domain/ports/task-repository.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";

export function admissionReport(
  tasks: number,
  inserted: readonly Run[],
  cancellations: readonly Run[],
  defective: readonly Task[] = [],
): AdmissionReport {
  return {
    tasks,
    decisions: inserted.length,
    queuedRuns: inserted.filter((run) => run.status === "queued"),
    skipped: inserted.filter((run) => run.status === "skipped").length,
    missed: inserted.filter((run) => run.status === "missed").length,
    cancellations,
    defective,
  };
}
