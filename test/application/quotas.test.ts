/**
 * Per-owner quotas (docs/security.md#quotas) through the library on a virtual clock: task count and least
 * period refused at create and edit, scheduled occurrences over the admission rate recorded `skipped`
 * with reason `quota` (never silently absent), triggers and backfills over their rate refused, and a
 * per-owner override that lifts one owner's quota only.
 */
import { describe, expect, it } from "vitest";
import type { StoreFactory } from "../../src/index.js";
import { createTestScheduler, memoryStore } from "../../src/testing.js";

const EVERY_SECOND = {
  title: "every second",
  schedule: { type: "cron", cron: "* * * * * *", timezone: "UTC" },
  target: { kind: "handler", name: "log" },
  options: { overlap: "allow_all" },
} as const;

async function refusal(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error("expected a refusal");
}

describe("quotas", () => {
  it("refuses a create past tasks_per_owner, naming the limit", async () => {
    const scheduler = createTestScheduler({
      start: "2026-01-01T00:00:00Z",
      policy: { quotas: { tasksPerOwner: 2 } },
    });
    await scheduler.tasks.create(EVERY_SECOND);
    await scheduler.tasks.create(EVERY_SECOND);
    const third = await refusal(scheduler.tasks.create(EVERY_SECOND));
    expect(third).toMatchObject({ code: "limit_exceeded", limit: "tasks_per_owner", max: 2 });
    const batch = await refusal(scheduler.tasks.createMany([EVERY_SECOND]));
    expect(batch).toMatchObject({ code: "limit_exceeded", limit: "tasks_per_owner" });
    await scheduler.stop();
  });

  it("counts an owner's tasks only when a task quota applies", async () => {
    // Counting reads every task of the owner: done per create, it made creating n tasks cost n².
    let counts = 0;
    const counting: StoreFactory = {
      open: async (options) => {
        // The count is the insert's, in its transaction, when it is given a quota check.
        const store = await memoryStore().open(options);
        const tasks = store.tasks as {
          insertTask: typeof store.tasks.insertTask;
          insertTasks: typeof store.tasks.insertTasks;
        };
        const one = tasks.insertTask.bind(store.tasks);
        const many = tasks.insertTasks.bind(store.tasks);
        tasks.insertTask = (task, quota) => {
          if (quota !== undefined) counts += 1;
          return one(task, quota);
        };
        tasks.insertTasks = (list, quota) => {
          if (quota !== undefined) counts += 1;
          return many(list, quota);
        };
        return store;
      },
    };
    const unlimited = createTestScheduler({ start: "2026-01-01T00:00:00Z", store: counting });
    await unlimited.tasks.create(EVERY_SECOND);
    await unlimited.tasks.createMany([EVERY_SECOND, EVERY_SECOND]);
    expect(counts).toBe(0);
    await unlimited.stop();
    const limited = createTestScheduler({
      start: "2026-01-01T00:00:00Z",
      store: counting,
      policy: { quotas: { tasksPerOwner: 10 } },
    });
    await limited.tasks.create(EVERY_SECOND);
    await limited.tasks.createMany([EVERY_SECOND, EVERY_SECOND]);
    expect(counts).toBe(2);
    await limited.stop();
  });

  it("refuses a schedule denser than min_period at create and at edit", async () => {
    const scheduler = createTestScheduler({
      start: "2026-01-01T00:00:00Z",
      policy: { quotas: { minPeriodMs: 60_000 } },
    });
    const dense = await refusal(scheduler.tasks.create(EVERY_SECOND));
    expect(dense).toMatchObject({ code: "limit_exceeded", limit: "min_period", max: 60_000 });
    const interval = await refusal(
      scheduler.tasks.create({ ...EVERY_SECOND, schedule: { type: "interval", every: "PT30S" } }),
    );
    expect(interval).toMatchObject({ limit: "min_period" });
    const { task } = await scheduler.tasks.create({
      ...EVERY_SECOND,
      schedule: { type: "cron", cron: "* * * * *", timezone: "UTC" },
    });
    const edit = await refusal(
      scheduler.tasks.update(task.id, {
        schedule: { type: "cron", cron: "*/10 * * * * *", timezone: "UTC" },
      }),
    );
    expect(edit).toMatchObject({ limit: "min_period" });
    await scheduler.stop();
  });

  it("records occurrences over runs_per_minute as skipped with reason quota", async () => {
    const scheduler = createTestScheduler({
      start: "2026-01-01T00:00:00Z",
      policy: { quotas: { runsPerMinute: 5, overrides: { vip: { runsPerMinute: 1000 } } } },
    });
    const { task } = await scheduler.tasks.create(EVERY_SECOND);
    await scheduler.advanceTo("2026-01-01T00:00:20Z");
    const runs = await scheduler.ledger(task.id);
    // Every nominal second has its one decision: none is absent.
    expect(runs).toHaveLength(20);
    const launched = runs.filter((r) => r.status === "succeeded");
    const skipped = runs.filter((r) => r.status === "skipped");
    expect(launched).toHaveLength(5);
    expect(skipped).toHaveLength(15);
    expect(skipped.every((r) => r.reason === "quota")).toBe(true);

    // The sliding minute frees the quota again.
    await scheduler.advanceTo("2026-01-01T00:01:10Z");
    const later = (await scheduler.ledger(task.id)).filter(
      (r) => r.scheduled_for > "2026-01-01T00:01:00Z" && r.status === "succeeded",
    );
    expect(later.length).toBeGreaterThan(0);

    // A trigger counts against the same minute.
    const trigger = await refusal(scheduler.tasks.trigger(task.id));
    expect(trigger).toMatchObject({ code: "quota_exceeded", limit: "runs_per_minute", max: 5 });
    await scheduler.stop();
  });

  it("refuses a backfill that would pass backfill_runs_per_hour, writing nothing", async () => {
    const scheduler = createTestScheduler({
      start: "2026-01-02T00:00:00Z",
      policy: { quotas: { backfillRunsPerHour: 30 } },
    });
    const { task } = await scheduler.tasks.create({
      ...EVERY_SECOND,
      schedule: { type: "cron", cron: "* * * * *", timezone: "UTC" },
    });
    const first = await scheduler.tasks.backfill(task.id, {
      from: "2026-01-01T00:00:00Z",
      to: "2026-01-01T00:20:00Z",
    });
    expect(first.runs).toHaveLength(20);
    const over = await refusal(
      scheduler.tasks.backfill(task.id, {
        from: "2026-01-01T01:00:00Z",
        to: "2026-01-01T01:20:00Z",
      }),
    );
    expect(over).toMatchObject({
      code: "quota_exceeded",
      limit: "backfill_runs_per_hour",
      max: 30,
      retryAfterSeconds: 3600,
    });
    const backfilled = (await scheduler.ledger(task.id)).filter((r) => r.trigger === "backfill");
    expect(backfilled).toHaveLength(20);
    await scheduler.stop();
  });
});
