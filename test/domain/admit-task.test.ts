/**
 * One task's admission as a store writes it (docs/semantics.md#the-life-of-an-occurrence): the mode it
 * is admitted in, and the cancellations `cancel_other` asks for applied only to runs actually active
 * (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import type { Admission } from "../../src/domain/admission.js";
import { activeView, admissionRows, admitTask } from "../../src/domain/admit-task.js";
import type { RunId } from "../../src/domain/ids.js";
import { buildRun, buildTask, MINUTE, plus, running, T0 } from "./builders.js";

describe("admitTask", () => {
  it("admits in the scheduled mode by default, and marks a resume's occurrences paused", () => {
    const task = buildTask();
    const now = plus(T0, 17 * MINUTE);
    const byDefault = admitTask(task, [], now);
    expect(admitTask(task, [], now, { kind: "scheduled" })).toEqual(byDefault);
    const resumed = admitTask(task, [], now, { kind: "resume", catchUp: "none" });
    const reasons = resumed.write.newRuns.map((run) => run.reason);
    expect(reasons).toContain("paused");
    expect(reasons).not.toContain("down");
    expect(resumed.write.newRuns.filter((run) => run.status === "queued")).toHaveLength(0);
  });
});

describe("admissionRows", () => {
  it("cancels only the runs still active, ignoring a cancellation of a run that is gone", () => {
    const task = buildTask();
    const active = running(buildRun({ id: "run-active" as RunId }));
    const admission = {
      task: {},
      decisions: [],
      cancellations: [
        { runId: "run-gone" as RunId, reason: "superseded" },
        { runId: "run-active" as RunId, reason: "superseded" },
      ],
    } as unknown as Admission;
    const rows = admissionRows(task, [active], admission, plus(T0, MINUTE));
    expect(rows.runUpdates.map((run) => [run.id, run.reason])).toEqual([
      ["run-active", "superseded"],
    ]);
    // A running run is asked to stop at its target; it stays running until the target confirms.
    expect(rows.cancelTargets.map((run) => run.id)).toEqual(["run-active"]);
    expect(rows.newRuns).toEqual([]);
  });

  it("refuses to view an ended run as active", () => {
    expect(() => activeView(buildRun({ status: "succeeded" }))).toThrow(/succeeded/);
  });
});
