/**
 * Contract: `admitDueTasks` decides each occurrence exactly once, only for enabled due tasks, most overdue
 * first, writes missed ranges and the `decided_through` watermark, and writes only the schedule fields.
 */
import { describe, expect, it } from "vitest";
import { activeView, admitTask } from "../../../src/domain/admit-task.js";
import type { ActiveRunView } from "../../../src/domain/admission.js";
import { idempotencyKeyFor } from "../../../src/domain/occurrence.js";
import type { Run } from "../../../src/domain/run.js";
import { parseSchedule } from "../../../src/domain/schedule/parse-schedule.js";
import type { Task } from "../../../src/domain/task.js";
import { ALICE, ALL, HOUR, T0, at, buildTask, cron, minute, onceAt } from "../fixtures.js";
import {
  admitDue,
  backfillRuns,
  claimAndLaunch,
  claimDue,
  edit,
  insertTask,
  insertTasks,
  ledger,
  pause,
  recordCompletion,
  recordLaunch,
  reload,
  resume,
  scheduledDecisions,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

/** The nominal times a task's scheduled decisions cover, checking that no two overlap. */
function coveredOnce(decisions: readonly Run[]): void {
  for (let i = 1; i < decisions.length; i++) {
    const previous = decisions[i - 1]!;
    expect(decisions[i]!.scheduledFor).toBeGreaterThan(
      previous.missedUntil ?? previous.scheduledFor,
    );
  }
}

export function describeAdmission(ctx: ContractContext): void {
  describe("admitDueTasks", () => {
    it("admits an enabled task whose next_run_at has come", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const report = await admitDue(store, minute(1));
      expect(report).toMatchObject({ tasks: 1, decisions: 1, skipped: 0, missed: 0 });
      expect(report.cancellations).toEqual([]);
      const [run] = report.queuedRuns;
      expect(run).toMatchObject({
        taskId: task.id,
        owner: ALICE,
        trigger: "scheduled",
        scheduledFor: minute(1),
        fireAt: minute(1),
        notBefore: minute(1),
        queuedAt: minute(1),
        status: "queued",
        attempt: 0,
        exclusive: true,
        threadScope: "agent:main",
        idempotencyKey: idempotencyKeyFor(task.id, "scheduled", minute(1)),
      });
      expect(run!.threadId).toBe(run!.id);
      expect(await store.runs.findRun(ALL, run!.id)).toEqual(run);
      expect(await reload(store, task.id)).toMatchObject({
        nextRunAt: minute(2),
        decidedThrough: minute(1),
        admittedCount: 1,
      });
    });

    it("hands decide each due task with its active runs", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const launching = await triggerRun(store, ALL, task.id, "k1", minute(0, 1));
      const queued = await triggerRun(store, ALL, task.id, "k2", minute(0, 2));
      await claimDue(store, minute(0, 3), { limit: 1 });
      const seen: { task: Task; views: readonly ActiveRunView[] }[] = [];
      await store.tasks.admitDueTasks(minute(1), 10, (current, activeRuns) => {
        seen.push({ task: current, views: activeRuns.map(activeView) });
        return admitTask(current, activeRuns, minute(1)).write;
      });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.task.id).toBe(task.id);
      expect([...seen[0]!.views].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(
        [
          { id: launching!.id, status: "launching", cancelRequested: false },
          { id: queued!.id, status: "queued", cancelRequested: false },
        ].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    });

    it("leaves paused, completed, cancelled, deleted, unscheduled and future tasks alone", async () => {
      const store = ctx.store();
      const due = buildTask();
      const idle: Task[] = [
        { ...buildTask(), status: "paused" },
        { ...buildTask(), status: "completed" },
        { ...buildTask(), status: "cancelled" },
        { ...buildTask(), nextRunAt: null },
        buildTask({ createdAt: minute(1) }),
      ];
      const deleted: Task = { ...buildTask(), deletedAt: T0 };
      for (const task of [due, ...idle, deleted]) await store.tasks.insertTask(task);
      const report = await admitDue(store, minute(1));
      expect(report.tasks).toBe(1);
      expect(await ledger(store, due.id)).toHaveLength(1);
      for (const task of [...idle, deleted]) expect(await ledger(store, task.id)).toEqual([]);
      for (const task of idle) expect(await reload(store, task.id)).toEqual(task);
    });

    it("admits the most overdue tasks first and honours the limit", async () => {
      const store = ctx.store();
      const [third, first, second] = await insertTasks(
        store,
        { schedule: onceAt(minute(3)) },
        { schedule: onceAt(minute(1)) },
        { schedule: onceAt(minute(2)) },
      );
      const report = await admitDue(store, minute(5), 2);
      expect(report.tasks).toBe(2);
      expect(report.queuedRuns.map((run) => run.taskId).sort()).toEqual(
        [first!.id, second!.id].sort(),
      );
      expect(await ledger(store, third!.id)).toEqual([]);
      const next = await admitDue(store, minute(5), 2);
      expect(next.queuedRuns.map((run) => run.taskId)).toEqual([third!.id]);
    });

    it("decides each occurrence once however often admission runs", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      expect(await admitDue(store, minute(1))).toMatchObject({ tasks: 0, decisions: 0 });
      await admitDue(store, minute(1, 30_000));
      await admitDue(store, minute(2));
      await admitDue(store, minute(2));
      await admitDue(store, minute(3));
      const decisions = await scheduledDecisions(store, task.id);
      expect(decisions.map((run) => run.scheduledFor)).toEqual([minute(1), minute(2), minute(3)]);
      expect(decisions.map((run) => run.status)).toEqual(["queued", "skipped", "skipped"]);
    });

    it("records overdue occurrences as one missed range and advances the watermark", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const now = minute(10, 30_000);
      const report = await admitDue(store, now);
      expect(report).toMatchObject({ tasks: 1, decisions: 2, missed: 1, skipped: 0 });
      const [missed, queued] = await scheduledDecisions(store, task.id);
      expect(missed).toMatchObject({
        status: "missed",
        reason: "down",
        scheduledFor: minute(1),
        missedCount: 9,
        missedUntil: minute(9),
        finishedAt: now,
      });
      expect(queued).toMatchObject({ status: "queued", scheduledFor: minute(10) });
      expect(await reload(store, task.id)).toMatchObject({
        decidedThrough: minute(10),
        nextRunAt: minute(11),
        admittedCount: 1,
      });
    });

    it("never re-decides what a resume with catch-up all, a backfill or an edit leave behind", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(10, 30_000));
      await pause(store, task.id, minute(10, 40_000));
      await resume(store, task.id, minute(15, 30_000), "all");
      const resumed = await reload(store, task.id);
      expect(resumed).toMatchObject({ decidedThrough: minute(15), nextRunAt: minute(16) });
      await backfillRuns(store, ALL, task.id, { from: T0, to: minute(16) }, minute(16));
      const everyTwo = parseSchedule(cron("*/2 * * * *"), { referenceAt: minute(16) });
      await edit(store, ALL, task.id, { schedule: everyTwo }, minute(16));
      expect((await reload(store, task.id)).decidedThrough).toBe(minute(15));
      await admitDue(store, minute(16, 30_000));
      await admitDue(store, minute(20, 30_000));
      await admitDue(store, minute(20, 30_000));
      const decisions = await scheduledDecisions(store, task.id);
      coveredOnce(decisions);
      // The edit recomputes next_run_at from its instant (docs/semantics.md#task-operations): 16:00 is not due before 18:00, so
      // at 20:30 the new schedule's 16:00 and 18:00 are one missed range and 20:00 runs.
      expect(decisions.map((run) => run.scheduledFor)).toEqual(
        [1, 10, 11, 12, 13, 14, 15, 16, 20].map((n) => minute(n)),
      );
      expect(decisions[7]).toMatchObject({
        status: "missed",
        missedCount: 2,
        missedUntil: minute(18),
      });
      expect(decisions.slice(2, 7).every((run) => run.status === "queued")).toBe(true);
      const backfills = (await ledger(store, task.id)).filter((run) => run.trigger === "backfill");
      expect(new Set(backfills.map((run) => run.scheduledFor)).size).toBe(16);
    });

    it("writes only the schedule fields of the task", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [launched] = await claimAndLaunch(store, minute(1, 1000));
      await recordCompletion(
        store,
        launched!.id,
        { status: "failed", error: "boom" },
        minute(1, 2000),
      );
      const before = await reload(store, task.id);
      expect(before).toMatchObject({ lastError: "boom", runCount: 1 });
      await admitDue(store, minute(2));
      const after = await reload(store, task.id);
      expect(after).toMatchObject({ nextRunAt: minute(3), decidedThrough: minute(2) });
      expect(after.admittedCount).toBe(2);
      expect({
        ...after,
        status: before.status,
        nextRunAt: before.nextRunAt,
        decidedThrough: before.decidedThrough,
        admittedCount: before.admittedCount,
      }).toEqual(before);
    });

    it("keeps the launch bookkeeping a concurrent launch writes", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [claimed] = await claimDue(store, minute(1, 1000));
      await Promise.all([admitDue(store, minute(2)), recordLaunch(store, claimed!, minute(2))]);
      // An admission that met the task's row locked by the launch skips it (SKIP LOCKED) and the next
      // pass decides it: that pass, a no-op when the first admission did take the task.
      await admitDue(store, minute(2));
      expect(await reload(store, task.id)).toMatchObject({
        runCount: 1,
        lastRunId: claimed!.run.id,
        lastRunAt: minute(2),
        nextRunAt: minute(3),
        decidedThrough: minute(2),
      });
    });

    it("fails a once task whose only occurrence fell outside the catch-up window", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { schedule: onceAt(minute(1)) });
      await admitDue(store, minute(1, 2 * HOUR));
      expect(await reload(store, task.id)).toMatchObject({
        status: "failed",
        lastError: "the occurrence was missed (window)",
        nextRunAt: null,
        decidedThrough: minute(1),
      });
      const [missed] = await ledger(store, task.id);
      expect(missed).toMatchObject({ status: "missed", reason: "window", missedCount: 1 });
    });

    it("completes a recurring task whose schedule has ended", async () => {
      const store = ctx.store();
      const task = await insertTask(store, {
        schedule: { type: "cron", cron: "* * * * *", max_runs: 1 },
      });
      await admitDue(store, minute(1));
      expect(await reload(store, task.id)).toMatchObject({
        status: "completed",
        nextRunAt: null,
        admittedCount: 1,
      });
      expect(await store.tasks.nextDueAt()).toBeNull();
      expect(await admitDue(store, minute(5))).toMatchObject({ tasks: 0, decisions: 0 });
    });

    it("applies cancel_other cancellations in the same step", async () => {
      const store = ctx.store();
      await insertTask(store, { options: { overlap: "cancel_other" } });
      const [superseded] = (await admitDue(store, minute(1))).queuedRuns;
      const report = await admitDue(store, minute(2));
      expect(report.queuedRuns).toHaveLength(1);
      expect(report.cancellations).toHaveLength(1);
      expect(report.cancellations[0]).toMatchObject({
        id: superseded!.id,
        status: "cancelled",
        reason: "superseded",
      });
      expect(await store.runs.findRun(ALL, superseded!.id)).toEqual(report.cancellations[0]);
    });

    it("marks a run admitted from a moved occurrence, through a retry and a backfill, and no other run", async () => {
      const store = ctx.store();
      const DAY = 24 * HOUR;
      // Mondays at 09:00 (T0 is one); Monday the 14th is excluded and moves to Sunday the 13th.
      const task = await insertTask(store, {
        schedule: {
          type: "cron",
          cron: "0 9 * * 1",
          timezone: "UTC",
          exclude: ["2030-01-14"],
          on_excluded: "previous",
        },
        options: { retry: { maxAttempts: 2 }, overlap: "allow_all" },
      });
      const moved = (await admitDue(store, at(6 * DAY + 30_000))).queuedRuns[0]!;
      expect(moved).toMatchObject({ scheduledFor: at(7 * DAY), fireAt: at(6 * DAY), moved: true });
      expect(await store.runs.findRun(ALL, moved.id)).toEqual(moved);
      // A failed attempt goes back to the queue (a run change): the marker stays.
      await claimAndLaunch(store, at(6 * DAY + 40_000));
      const retried = await recordCompletion(
        store,
        moved.id,
        { status: "failed", error: "boom" },
        at(6 * DAY + 50_000),
      );
      expect(retried!.run).toMatchObject({ status: "queued", attempt: 1, moved: true });
      expect(await store.runs.findRun(ALL, moved.id)).toMatchObject({ moved: true });
      const ordinary = (await admitDue(store, at(14 * DAY + 30_000))).queuedRuns[0]!;
      expect(ordinary).toMatchObject({ scheduledFor: at(14 * DAY), moved: false });
      expect(await store.runs.findRun(ALL, ordinary.id)).toMatchObject({ moved: false });
      const backfilled = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: at(DAY), to: at(15 * DAY) },
        at(15 * DAY),
      );
      expect(
        backfilled.map((run) => run && [run.scheduledFor - T0, run.fireAt - T0, run.moved]),
      ).toEqual([
        [7 * DAY, 6 * DAY, true],
        [14 * DAY, 14 * DAY, false],
      ]);
      for (const run of backfilled) {
        expect(await store.runs.findRun(ALL, run!.id)).toEqual(run);
      }
    });

    it("rolls back only the task whose occurrence was already decided", async () => {
      const store = ctx.store();
      const [rewound, healthy] = await insertTasks(store, {}, {});
      await admitDue(store, minute(1));
      await store.tasks.mutateTask(ALL, rewound!.id, ({ task }) => ({
        task: { ...task, decidedThrough: T0, nextRunAt: minute(1) },
        result: () => null,
      }));
      const before = await reload(store, rewound!.id);
      const report = await admitDue(store, minute(2));
      expect(report.tasks).toBe(1);
      expect(await scheduledDecisions(store, rewound!.id)).toHaveLength(1);
      expect(await reload(store, rewound!.id)).toEqual(before);
      expect(await scheduledDecisions(store, healthy!.id)).toHaveLength(2);
    });
  });
}
