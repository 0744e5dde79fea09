/**
 * Declared schedules through the library (docs/library.md#declared-schedules): `createScheduler({
 * schedules, schedulesGroup })` syncs at `start()` by upsert; a restart with the same declaration
 * writes nothing; a changed one updates; tasks of the group no longer declared are left, paused or
 * deleted; another group's and undeclared tasks are never touched; a bad definition writes nothing.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import type { StoreFactory } from "../../src/domain/ports/store.js";
import { ValidationError } from "../../src/domain/errors.js";
import { createTestScheduler } from "../../src/testing.js";
import type { TestScheduler } from "../../src/testing.js";

const START = "2030-01-07T09:00:00Z";

const nightly = (hour = 2) => ({
  key: "billing:nightly",
  title: "Nightly invoices",
  schedule: { type: "cron", cron: `0 ${hour} * * *`, timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "log" },
});
const weekly = {
  key: "billing:weekly",
  title: "Weekly statement",
  schedule: { type: "cron", cron: "0 8 * * 1", timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "log" },
};

const files = tempFiles("declared-schedules");
afterAll(() => {
  files.remove();
});
let databases = 0;

/** A SQLite file each "restart" opens again, so that it sees what earlier schedulers wrote. */
function sharedStore(): StoreFactory {
  return sqlite(files.path(`declared-${++databases}`));
}

const running: TestScheduler[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function boot(
  store: StoreFactory,
  options: Partial<Parameters<typeof createTestScheduler>[0]>,
) {
  const scheduler = createTestScheduler({ start: START, store, ...options });
  running.push(scheduler);
  await scheduler.start();
  return scheduler;
}

describe("declared schedules", () => {
  it("creates the declared tasks at start, in their group, and a restart writes nothing", async () => {
    const store = sharedStore();
    const first = await boot(store, { schedules: [nightly(), weekly], schedulesGroup: "billing" });
    const task = await first.tasks.getByKey("billing:nightly");
    expect(task).toMatchObject({
      group: "billing",
      version: 1,
      next_run_at: "2030-01-08T01:00:00Z",
    });
    const again = await boot(store, { schedules: [nightly(), weekly], schedulesGroup: "billing" });
    const plan = await again.applySchedules({ schedules: [nightly(), weekly], group: "billing" });
    expect(plan.steps.map((s) => s.action)).toEqual(["unchanged", "unchanged"]);
    expect((await again.tasks.getByKey("billing:nightly")).version).toBe(1);
    expect((await again.tasks.list()).items).toHaveLength(2);
  });

  it("stores the group `default` when the declaration names none", async () => {
    const scheduler = await boot(sharedStore(), { schedules: [nightly()] });
    expect((await scheduler.tasks.getByKey("billing:nightly")).group).toBe("default");
  });

  it("updates a changed definition; the declaration started last wins", async () => {
    const store = sharedStore();
    await boot(store, { schedules: [nightly(2)], schedulesGroup: "billing" });
    const later = await boot(store, { schedules: [nightly(3)], schedulesGroup: "billing" });
    expect(await later.tasks.getByKey("billing:nightly")).toMatchObject({
      version: 2,
      next_run_at: "2030-01-08T02:00:00Z",
    });
  });

  it("leaves, pauses or deletes the group's tasks no longer declared, and nothing else", async () => {
    const store = sharedStore();
    const first = await boot(store, { schedules: [nightly(), weekly], schedulesGroup: "billing" });
    await first.tasks.upsert({ ...weekly, key: "reports:weekly", group: "reports" });
    const undeclared = await first.tasks.create({ ...weekly, key: undefined, title: "by hand" });

    const left = await first.applySchedules({ schedules: [nightly()], group: "billing" });
    expect(left.steps.at(-1)).toMatchObject({
      key: "billing:weekly",
      action: "prune",
      prune: "left",
    });
    expect((await first.tasks.getByKey("billing:weekly")).status).toBe("enabled");

    const dry = await first.applySchedules(
      { schedules: [nightly()], group: "billing", prune: "delete" },
      { dryRun: true },
    );
    expect(dry.steps.at(-1)).toMatchObject({ action: "prune", prune: "deleted" });
    expect((await first.tasks.getByKey("billing:weekly")).status).toBe("enabled");

    const paused = await first.applySchedules({
      schedules: [nightly()],
      group: "billing",
      prune: "pause",
    });
    expect(paused.steps.at(-1)).toMatchObject({ action: "prune", prune: "paused" });
    expect((await first.tasks.getByKey("billing:weekly")).status).toBe("paused");

    const deleted = await first.applySchedules({
      schedules: [nightly()],
      group: "billing",
      prune: "delete",
    });
    expect(deleted.steps.at(-1)).toMatchObject({ action: "prune", prune: "deleted" });
    await expect(first.tasks.getByKey("billing:weekly")).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await first.tasks.getByKey("reports:weekly")).status).toBe("enabled");
    expect((await first.tasks.get(undeclared.task.id)).status).toBe("enabled");
  });

  it("deletes a pruned task whose run is running when that run ends, without stopping it", async () => {
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const job = { ...weekly, target: { kind: "handler", name: "block" } };
    const scheduler = await boot(sharedStore(), {
      schedules: [job],
      schedulesGroup: "billing",
      handlers: { block: () => blocked.then(() => ({ done: true })) },
    });
    const task = await scheduler.tasks.getByKey("billing:weekly");
    const triggered = await scheduler.tasks.trigger(task.id);
    await scheduler.advanceBy(1000);
    expect((await scheduler.runs.get(triggered.id)).status).toBe("running");
    const plan = await scheduler.applySchedules({
      schedules: [],
      group: "billing",
      prune: "delete",
    });
    expect(plan.steps).toMatchObject([{ action: "prune", prune: "deleted" }]);
    // Gone at once (and admits nothing), while its run goes on, not asked to stop.
    await expect(scheduler.tasks.getByKey("billing:weekly")).rejects.toMatchObject({
      code: "not_found",
    });
    expect(await scheduler.runs.get(triggered.id)).toMatchObject({
      status: "running",
      cancel_requested_at: null,
    });
    release();
    await scheduler.advanceBy(1000);
    expect(await scheduler.runs.get(triggered.id)).toMatchObject({ status: "succeeded" });
    // The key is free again: declaring it anew makes a new task.
    const again = await scheduler.applySchedules({ schedules: [job], group: "billing" });
    expect(again.steps).toMatchObject([{ action: "create" }]);
    expect((await scheduler.tasks.getByKey("billing:weekly")).id).not.toBe(task.id);
  });

  it("writes nothing when one definition is invalid, naming it by index", async () => {
    const store = sharedStore();
    const bad = { ...weekly, schedule: { type: "cron", cron: "61 * * * *" } };
    const scheduler = createTestScheduler({ start: START, store, schedules: [nightly(), bad] });
    running.push(scheduler);
    const error = await scheduler.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).errors.map((e) => e.field)).toEqual([
      "schedules.1.schedule.cron",
    ]);
    expect((await scheduler.tasks.list()).items).toEqual([]);
    const repeated = await scheduler
      .applySchedules({ schedules: [nightly(), nightly(), { title: "no key" }] })
      .catch((e: unknown) => e);
    expect((repeated as ValidationError).errors.map((e) => e.field)).toEqual([
      "schedules.1.key",
      "schedules.2.key",
    ]);
  });
});
