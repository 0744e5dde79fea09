/**
 * A schedule patch keeps what it does not name (docs/semantics.md#task-operations): the stored zone,
 * start_at, end_at, max_runs, jitter and exclude; and instants with milliseconds are accepted, rounded up
 * to the next whole second (docs/schedules.md#precision), visible in the answer.
 */
import { describe, expect, it } from "vitest";
import { ALICE, createTask, cronInput, harness, iso, minute, onceInput } from "./harness.js";

const BERLIN = {
  type: "cron" as const,
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  start_at: "2030-02-01T00:00:00Z",
  end_at: "2031-01-01T00:00:00Z",
  max_runs: 5,
  jitter: "PT30S",
  exclude: ["2030-12-25"],
};

describe("TaskService.update of a schedule", () => {
  it("keeps the stored zone, bounds, jitter and exclude a patch does not name", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 9 * * *", { schedule: BERLIN }));
    const { task: edited } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "cron", cron: "0 10 * * *" } },
      null,
      h.clock.now,
    );
    expect(edited.schedule).toEqual({ ...BERLIN, cron: "0 10 * * *" });
    expect(edited.next_run_at).toBe("2030-02-01T09:00:00Z");
  });

  it("clears a field the patch names as null, and keeps the zone when the type changes", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 9 * * *", { schedule: BERLIN }));
    const { task: cleared } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "cron", cron: "0 9 * * *", exclude: null, max_runs: null } },
      null,
      h.clock.now,
    );
    expect(cleared.schedule).not.toHaveProperty("exclude");
    expect(cleared.schedule).not.toHaveProperty("max_runs");
    expect(cleared.schedule).toMatchObject({ timezone: "Europe/Berlin", jitter: "PT30S" });
    const { task: once } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "once", run_at: "2030-03-01T09:00:00" } },
      null,
      h.clock.now,
    );
    expect(once.schedule).toEqual({
      type: "once",
      run_at: "2030-03-01T09:00:00",
      timezone: "Europe/Berlin",
      jitter: "PT30S",
    });
    expect(once.next_run_at).toBe("2030-03-01T08:00:00Z");
  });
});

describe("instants with milliseconds", () => {
  it("accepts run_at = now + 24 h with milliseconds and fires on the next whole second", async () => {
    const h = harness();
    h.clock.advance(123);
    const runAt = new Date(h.clock.now + 24 * 3600e3).toISOString();
    expect(runAt).toMatch(/\.123Z$/);
    const task = await createTask(
      h,
      onceInput(minute(0), { schedule: { type: "once", run_at: runAt } }),
    );
    expect(task.next_run_at).toBe(iso(minute(24 * 60, 1000)));
    expect(task.schedule).toMatchObject({ run_at: iso(minute(24 * 60, 1000)) });
  });

  it("rounds start_at up and keeps end_at to the millisecond", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("* * * * *", {
        schedule: {
          type: "cron",
          cron: "* * * * *",
          start_at: "2030-01-07T09:10:00.001Z",
          end_at: "2030-01-07T10:00:00.500Z",
        },
      }),
    );
    expect(task.schedule).toMatchObject({
      start_at: "2030-01-07T09:10:01Z",
      end_at: "2030-01-07T10:00:00.500Z",
    });
    expect(task.next_run_at).toBe("2030-01-07T09:11:00Z");
  });
});
