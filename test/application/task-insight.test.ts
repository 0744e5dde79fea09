/**
 * What a task shows of its future and its past (docs/semantics.md#explain) through the application's
 * functions: a preview from where admission stands, a DST gap as the API shows it, an excluded
 * occurrence explained, and a history read page by page (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import {
  explainTask,
  previewSchedule,
  previewTask,
} from "../../src/application/tasks/task-insight.js";
import type { OwnerScope, RunQuery } from "../../src/domain/ports/queries.js";
import type { RunRepository } from "../../src/domain/ports/run-repository.js";
import type { Run } from "../../src/domain/run.js";
import { at, buildRun, buildTask, plus, schedule, T0 } from "../domain/builders.js";

const DAILY_0930_BERLIN = schedule({
  type: "cron",
  cron: "30 9 * * *",
  timezone: "Europe/Berlin",
  exclude: ["2026-03-04"],
});

/** A run history served `pageSize` runs a page, recording each page asked for. */
function history(
  runs: readonly Run[],
  pageSize: number,
): {
  repository: RunRepository;
  cursors: (string | undefined)[];
} {
  const cursors: (string | undefined)[] = [];
  const listRuns = (_scope: OwnerScope, _taskId: unknown, query: RunQuery) => {
    cursors.push(query.cursor);
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    const end = start + pageSize;
    return Promise.resolve({
      items: runs.slice(start, end),
      nextCursor: end < runs.length ? String(end) : null,
    });
  };
  return { repository: { listRuns } as unknown as RunRepository, cursors };
}

const ALL: OwnerScope = { kind: "all" };

describe("previewTask", () => {
  it("starts from where admission has decided through, when that is ahead of now", () => {
    const task = buildTask({
      schedule: DAILY_0930_BERLIN,
      decidedThrough: at("2026-03-05T12:00:00Z"),
    });
    expect(previewTask(task, 2, T0).map((o) => o.at)).toEqual([
      "2026-03-06T08:30:00Z",
      "2026-03-07T08:30:00Z",
    ]);
    // From now (10:00 in Berlin) when admission is behind it; the excluded 4 March is passed over.
    const behind = buildTask({ schedule: DAILY_0930_BERLIN, decidedThrough: plus(T0, -1) });
    const preview = previewTask(behind, 2, T0);
    expect(preview.map((o) => o.at)).toEqual(["2026-03-03T08:30:00Z", "2026-03-05T08:30:00Z"]);
    expect(preview[1]?.suppressed_before).toEqual([
      {
        kind: "excluded",
        at: "2026-03-04T08:30:00Z",
        wall: "2026-03-04T09:30:00",
        exclusion: { item: "2026-03-04", calendar: null },
      },
    ]);
  });

  it("shows nothing for an ended task", () => {
    for (const status of ["completed", "cancelled", "failed"] as const) {
      expect(previewTask(buildTask({ status }), 3, T0)).toEqual([]);
    }
  });
});

describe("previewSchedule", () => {
  it("shows a fire moved by a DST gap (to the gap's end) with the wall time it was meant for", () => {
    const [fire] = previewSchedule(
      { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
      1,
      at("2026-03-29T00:00:00Z"),
    );
    expect(fire).toMatchObject({
      at: "2026-03-29T01:00:00Z",
      note: { kind: "gap_shifted", nominal_wall: "2026-03-29T02:30:00" },
    });
  });
});

describe("explainTask", () => {
  it("names the exclusion an occurrence fell on, for the occurrence and the verdict", async () => {
    const task = buildTask({
      schedule: DAILY_0930_BERLIN,
      decidedThrough: at("2026-03-05T00:00:00Z"),
    });
    const { repository } = history([], 200);
    const view = await explainTask({
      runs: repository,
      scope: ALL,
      task,
      at: at("2026-03-04T08:30:00Z"),
      now: at("2026-03-05T00:00:00Z"),
    });
    expect(view.verdict).toBe("excluded");
    expect(view.exclusion).toEqual({ item: "2026-03-04", calendar: null });
    expect(view.occurrence?.exclusion).toEqual({ item: "2026-03-04", calendar: null });
  });

  it("reads the history page after page until it reaches the instant, and no further", async () => {
    const task = buildTask({
      schedule: DAILY_0930_BERLIN,
      decidedThrough: at("2026-03-10T00:00:00Z"),
    });
    const day = (date: string): Run =>
      buildRun({
        id: `run-${date}` as Run["id"],
        scheduledFor: at(`${date}T08:30:00Z`),
        status: "succeeded",
      });
    // Newest first, as the store pages them (4 March excluded, so no run).
    const runs = ["03-09", "03-08", "03-07", "03-06", "03-05", "03-03", "03-02", "03-01", "02-28"]
      .map((d) => `2026-${d}`)
      .map(day);
    const paged = history(runs, 2);
    const view = await explainTask({
      runs: paged.repository,
      scope: ALL,
      task,
      at: at("2026-03-03T08:30:00Z"),
      now: at("2026-03-10T00:00:00Z"),
    });
    expect(view.verdict).toBe("launched");
    expect(view.run?.id).toBe("run-2026-03-03");
    // Pages of two: the run of 2 March, the occurrence before the one asked about, shows the history
    // reached back past it: the page of 28 February is never read.
    expect(paged.cursors).toEqual([undefined, "2", "4", "6"]);
  });

  it("says in words what became of the run of the occurrence asked about", async () => {
    const task = buildTask({
      schedule: DAILY_0930_BERLIN,
      decidedThrough: at("2026-03-10T00:00:00Z"),
    });
    const scheduledFor = at("2026-03-03T08:30:00Z");
    const now = at("2026-03-10T00:00:00Z");
    const explain = async (fields: Partial<Run>) => {
      const run = buildRun({ id: "run-x" as Run["id"], scheduledFor, ...fields });
      const { repository } = history([run], 200);
      return explainTask({ runs: repository, scope: ALL, task, at: scheduledFor, now });
    };
    const cases: [Partial<Run>, string, RegExp][] = [
      [
        { status: "queued", notBefore: at("2026-03-11T08:00:00Z") },
        "queued",
        /waiting for .*2026-03-11/,
      ],
      [
        { status: "queued", notBefore: scheduledFor },
        "queued",
        /waiting for its thread, the task's slot or the global budget/,
      ],
      [
        { status: "launching", attempt: 2 },
        "launched",
        /is being launched as run run-x \(attempt 2\)/,
      ],
      [
        { status: "failed", reason: "launch_failed", launchedAt: null },
        "failed",
        /was not launched: run run-x failed/,
      ],
      [{ status: "failed", launchedAt: scheduledFor }, "failed", /and failed/],
      [
        { status: "timed_out", launchedAt: scheduledFor, deadlineAt: null },
        "timed_out",
        /and timed out\.$/,
      ],
      [
        { status: "cancelled", launchedAt: null },
        "cancelled",
        /was cancelled before its launch, as run run-x/,
      ],
      [{ status: "cancelled", launchedAt: scheduledFor }, "cancelled", /and then cancelled/],
      [{ status: "skipped", reason: "overlap" }, "skipped", /was skipped \(record run-x\)/],
      [
        { status: "missed", reason: "down", missedCount: null, missedUntil: null },
        "missed",
        /was missed: .* \(record run-x\)\.$/,
      ],
    ];
    for (const [fields, verdict, words] of cases) {
      const view = await explain(fields);
      expect(view.verdict, JSON.stringify(fields)).toBe(verdict);
      expect(view.message, JSON.stringify(fields)).toMatch(words);
    }
  });
});
