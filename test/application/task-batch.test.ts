/**
 * TaskService.createMany (docs/semantics.md#bulk-create): every item validated before anything is
 * written, each refusal named by its index, all or none, the answer in input order.
 */
import { describe, expect, it } from "vitest";
import { LimitExceededError, ValidationError } from "../../src/domain/errors.js";
import { ADMIN, ALICE, cronInput, harness, handlerInput, minute, onceInput } from "./harness.js";
import type { Harness } from "./harness.js";

async function taskCount(h: Harness): Promise<number> {
  return (await h.tasks.list(ADMIN, { limit: 200 })).items.length;
}

async function refusal(call: Promise<unknown>): Promise<ValidationError> {
  const error: unknown = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

describe("TaskService.createMany", () => {
  it("creates every task and answers in input order with each one's warnings", async () => {
    const h = harness();
    const inputs = Array.from({ length: 120 }, (_, i) =>
      onceInput(minute(1 + i), { title: `Reminder ${String(i)}` }),
    );
    inputs.push(
      cronInput("30 2 * * *", {
        title: "Berlin DST",
        schedule: { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
      }),
    );
    const created = await h.tasks.createMany(ALICE, inputs, h.clock.now);
    expect(created.map((c) => c.task.title)).toEqual(inputs.map((input) => input.title));
    expect(new Set(created.map((c) => c.task.id)).size).toBe(inputs.length);
    expect(created.at(-1)?.warnings.length).toBeGreaterThan(0);
    expect(created[0]?.warnings).toEqual([]);
    for (const { task } of created) {
      expect(await h.tasks.get(ALICE, task.id)).toEqual(task);
    }
    expect(h.signals.wakes).toBeGreaterThan(0);
  });

  it("refuses a batch whose key repeats or is taken, naming the index, and writes nothing", async () => {
    const h = harness();
    await h.tasks.create(ALICE, handlerInput("* * * * *", { key: "taken" }), h.clock.now);
    const repeated = await refusal(
      h.tasks.createMany(
        ALICE,
        [
          handlerInput("* * * * *", { key: "a" }),
          handlerInput("* * * * *", { key: "b" }),
          handlerInput("* * * * *", { key: "a" }),
        ],
        h.clock.now,
      ),
    );
    expect(repeated.errors.map((e) => e.field)).toEqual(["tasks[2].key"]);
    const taken = await refusal(
      h.tasks.createMany(
        ALICE,
        [handlerInput("* * * * *", { key: "free" }), handlerInput("* * * * *", { key: "taken" })],
        h.clock.now,
      ),
    );
    expect(taken.errors.map((e) => e.field)).toEqual(["tasks[1].key"]);
    expect(await taskCount(h)).toBe(1);
    // Another owner's key is another namespace; keys reach the created tasks.
    const created = await h.tasks.createMany(
      ADMIN,
      [handlerInput("* * * * *", { key: "taken" })],
      h.clock.now,
    );
    expect(created[0]?.task.key).toBe("taken");
  });

  it("names every bad field of every item by its index and writes nothing", async () => {
    const h = harness();
    const inputs = [
      handlerInput("* * * * *"),
      handlerInput("not a cron"),
      handlerInput("* * * * *", { title: "" }),
      handlerInput("* * * * *", { target: { kind: "handler", name: "nope" } }),
      onceInput(minute(-1)),
    ];
    const error = await refusal(h.tasks.createMany(ALICE, inputs, h.clock.now));
    expect(error.errors.map((e) => e.field)).toEqual([
      "tasks[1].schedule.cron",
      "tasks[2].title",
      "tasks[3].target.name",
      "tasks[4].schedule.run_at",
    ]);
    expect(await taskCount(h)).toBe(0);
  });

  it("names an item whose bound thread does not exist", async () => {
    const h = harness();
    h.threads.add(ALICE.owner, "agent:main", "known");
    const bound = (id: string) =>
      cronInput("0 9 * * *", { context: { mode: "reuse_thread", thread_id: id } });
    const error = await refusal(
      h.tasks.createMany(ALICE, [bound("known"), bound("missing")], h.clock.now),
    );
    expect(error.errors.map((e) => e.field)).toEqual(["tasks[1].context.thread_id"]);
    expect(await taskCount(h)).toBe(0);
  });

  it("refuses a list that is not one, and more than 1,000 tasks", async () => {
    const h = harness();
    const error = await refusal(h.tasks.createMany(ALICE, { tasks: [] }, h.clock.now));
    expect(error.errors.map((e) => e.field)).toEqual(["tasks"]);
    const many = Array.from({ length: 1001 }, () => handlerInput("* * * * *"));
    await expect(h.tasks.createMany(ALICE, many, h.clock.now)).rejects.toBeInstanceOf(
      LimitExceededError,
    );
    expect(await taskCount(h)).toBe(0);
  });

  it("creates nothing and answers an empty list for an empty batch", async () => {
    const h = harness();
    await expect(h.tasks.createMany(ALICE, [], h.clock.now)).resolves.toEqual([]);
    expect(await taskCount(h)).toBe(0);
  });

  it("refuses a batch whose schedules exclude over 10,000 items, calendars expanded, and writes nothing", async () => {
    const h = harness();
    const dates = Array.from({ length: 1_000 }, (_, i) =>
      new Date(Date.UTC(2031, 0, 1) + i * 86_400_000).toISOString().slice(0, 10),
    );
    await h.tasks.calendars.put(ALICE, "long", { items: dates }, h.clock.now);
    const item = handlerInput("0 8 * * *", {
      schedule: {
        type: "cron",
        cron: "0 8 * * *",
        timezone: "UTC",
        exclude: [{ calendar: "long" }],
      },
    });
    await expect(
      h.tasks.createMany(ALICE, Array(10).fill(item), h.clock.now),
    ).resolves.toHaveLength(10);
    const error: unknown = await h.tasks
      .createMany(ALICE, Array(11).fill(item), h.clock.now)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ limit: "batch_exclusion_items", max: 10_000 });
    expect(await taskCount(h)).toBe(10);
  });

  it("names the item whose key is taken between the batch's check and its insert", async () => {
    const h = harness();
    const tasks = h.store.tasks;
    const insert = tasks.insertTasks.bind(tasks);
    let raced = false;
    tasks.insertTasks = async (...args) => {
      if (!raced) {
        raced = true;
        await h.tasks.create(ALICE, handlerInput("* * * * *", { key: "late" }), h.clock.now);
      }
      return insert(...args);
    };
    const error = await refusal(
      h.tasks.createMany(
        ALICE,
        [handlerInput("* * * * *", { key: "free" }), handlerInput("* * * * *", { key: "late" })],
        h.clock.now,
      ),
    );
    expect(error.errors.map((e) => e.field)).toEqual(["tasks[1].key"]);
    expect(raced).toBe(true);
    expect(await taskCount(h)).toBe(1);
  });
});
