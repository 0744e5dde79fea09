/**
 * One bad row cannot stop the fleet (docs/operations.md#a-task-that-does-not-parse): on a real SQLite
 * file whose task row is corrupted behind punctual's back, the coordinator keeps firing every other
 * task, reports the broken one once (log and event), and fires it again once an edit repairs it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import type { Task } from "../../src/domain/task.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { MINUTE, createHarness } from "./harness.js";
import type { LaunchCall } from "./harness.js";

const directory = mkdtempSync(join(tmpdir(), "punctual-defects-"));
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const T0 = Date.parse("2026-01-05T00:00:00Z");

const succeedAtOnce = (call: LaunchCall): void => {
  call.resolve({ completion: { status: "succeeded" } });
};

function corrupt(path: string, id: string, column: string, raw: string): void {
  const db = new Database(path);
  try {
    db.prepare(`UPDATE tasks SET ${column} = ? WHERE id = ?`).run(raw, id);
  } finally {
    db.close();
  }
}

async function sqliteHarness(name: string) {
  const path = join(directory, `${name}.db`);
  const clock = new VirtualClock(T0);
  const store = await openSqliteStore({ path, newId: createIdGenerator(() => clock.now()) });
  const events = new SchedulerEvents();
  const defective: Task[] = [];
  events.on("task:defective", ({ task }) => defective.push(task));
  const h = createHarness({ clock, store, events });
  h.launcher.behaviour = succeedAtOnce;
  return { h, path, store, defective };
}

describe("Coordinator with a task whose stored row no longer parses", () => {
  it("keeps firing the other tasks and reports the broken one once", async () => {
    const { h, path, store, defective } = await sqliteHarness("others-fire");
    const sound = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    const broken = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    corrupt(path, broken.id, "schedule", '{"type":"interval","every":"one minute"}');
    await h.runUntil(T0 + 5 * MINUTE + 1000);
    const fired = h.launcher.calls.map((call) => call.task.id);
    expect(fired.filter((id) => id === sound.id)).toHaveLength(5);
    expect(fired).not.toContain(broken.id);
    expect(await h.runs(broken.id)).toEqual([]);
    expect(defective.map((task) => task.id)).toEqual([broken.id]);
    const logged = h.logger.lines.filter((line) => line.level === "error");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.obj).toMatchObject({ taskId: broken.id });
    expect((await h.task(broken.id)).defect?.fields.map((item) => item.field)).toEqual([
      "schedule",
    ]);
    await store.close();
  });

  it("fires the task again once an edit gives its schedule anew", async () => {
    const { h, path, store } = await sqliteHarness("repaired");
    const broken = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    corrupt(path, broken.id, "schedule", "null");
    await h.runUntil(T0 + 2 * MINUTE + 1000);
    expect(h.launcher.calls).toHaveLength(0);
    await expect(h.tasks.pause(LOCAL_ACTOR, broken.id, {}, h.clock.now())).rejects.toMatchObject({
      code: "task_defective",
    });
    const repaired = await h.tasks.update(
      LOCAL_ACTOR,
      broken.id,
      { schedule: { type: "interval", every: "PT1M" } },
      null,
      h.clock.now(),
    );
    expect(repaired.task.defect).toBeNull();
    await h.runUntil(T0 + 5 * MINUTE + 1000);
    expect(h.launcher.calls.length).toBeGreaterThanOrEqual(2);
    expect((await h.task(broken.id)).defect).toBeNull();
    await store.close();
  });

  it("fails a run whose task's target broke after it was queued, without launching it", async () => {
    const { h, path, store } = await sqliteHarness("target-broke");
    const task = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    h.launcher.behaviour = () => undefined;
    await h.runUntil(T0 + MINUTE);
    // The first run is launching; the next one is admitted after the target breaks.
    expect(h.launcher.calls).toHaveLength(1);
    h.launcher.calls[0]!.resolve({ completion: { status: "succeeded" } });
    await h.tick();
    const queued = await h.tasks.trigger(
      LOCAL_ACTOR,
      task.id,
      { idempotencyKey: "now" },
      h.clock.now(),
    );
    corrupt(path, task.id, "target", '{"kind":"handler","name":7}');
    await h.tick();
    expect(h.launcher.calls).toHaveLength(1);
    const run = await h.run(queued.id);
    expect(run).toMatchObject({ status: "failed", reason: "launch_failed" });
    expect(run.error).toMatch(/target does not parse/);
    await store.close();
  });
});
