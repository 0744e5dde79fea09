/**
 * TaskService.upsert and getByKey (docs/semantics.md#task-keys, docs/semantics.md#upsert): create or
 * replace by key, identical input writes nothing, `changed` names the fields, status is never touched,
 * a terminal task is re-armed only as an edit would, and a taken key refuses a plain create.
 */
import { describe, expect, it } from "vitest";
import { KeyTakenError, StaleVersionError, ValidationError } from "../../src/domain/errors.js";
import type { TaskCreateInput } from "../../src/application/shapes/task-input.js";
import {
  ALICE,
  BOB,
  claimAndLaunch,
  cronInput,
  harness,
  history,
  iso,
  minute,
  onceInput,
  reload,
} from "./harness.js";
import type { Harness } from "./harness.js";

function keyed(key: string, input: TaskCreateInput): TaskCreateInput {
  return { ...input, key };
}

function upsert(h: Harness, input: unknown, version: number | null = null) {
  return h.tasks.upsert(ALICE, input, version, h.clock.now);
}

describe("TaskService.upsert", () => {
  it("creates the task when no task of the owner has the key", async () => {
    const h = harness();
    const answer = await upsert(h, keyed("report:daily", cronInput("0 9 * * *")));
    expect(answer.created).toBe(true);
    expect(answer.changed).toEqual([]);
    expect(answer.task.key).toBe("report:daily");
    expect(answer.task.version).toBe(1);
    expect((await h.tasks.getByKey(ALICE, "report:daily")).id).toBe(answer.task.id);
  });

  it("answers identical input with no change and no new version", async () => {
    const h = harness();
    const first = await upsert(h, keyed("k", cronInput("0 9 * * *")));
    h.clock.advance(5 * 60_000);
    const again = await upsert(h, keyed("k", cronInput("0  9 * * *")));
    expect(again.created).toBe(false);
    expect(again.changed).toEqual([]);
    expect(again.task.id).toBe(first.task.id);
    expect(again.task.version).toBe(1);
    expect(again.task.updated_at).toBe(first.task.updated_at);
  });

  it("replaces the definition: a field left out takes its default, and changed names each field", async () => {
    const h = harness();
    await upsert(
      h,
      keyed(
        "k",
        cronInput("0 9 * * *", {
          description: "old",
          metadata: { team: "a" },
          options: { overlap: "allow_all" },
        }),
      ),
    );
    const answer = await upsert(h, keyed("k", cronInput("0 10 * * *", { title: "Renamed" })));
    expect(answer.changed).toEqual(["title", "description", "schedule", "options", "metadata"]);
    expect(answer.task.version).toBe(2);
    expect(answer.task.description).toBeNull();
    expect(answer.task.metadata).toEqual({});
    expect(answer.task.options.overlap).toBe(h.policy.defaultOptions.overlap);
    expect(answer.task.next_run_at).toBe("2030-01-07T10:00:00Z");
  });

  it("never touches status: a paused task stays paused through a schedule change", async () => {
    const h = harness();
    const { task } = await upsert(h, keyed("k", cronInput("0 9 * * *")));
    await h.tasks.pause(ALICE, task.id, {}, h.clock.now);
    const answer = await upsert(h, keyed("k", cronInput("30 9 * * *")));
    expect(answer.changed).toEqual(["schedule"]);
    expect(answer.task.status).toBe("paused");
  });

  it("re-arms a completed once task only when its schedule gets a future occurrence", async () => {
    const h = harness();
    const { task } = await upsert(h, keyed("once", onceInput(minute(1))));
    h.clock.advance(60_000);
    await h.dispatch.admission.admitDue(h.clock.now, 10);
    const [run] = await claimAndLaunch(h, h.clock.now);
    await h.dispatch.runWrites.recordCompletion(run!.id, { status: "succeeded" }, h.clock.now);
    expect((await reload(h, task.id)).status).toBe("completed");

    const retitled = await upsert(h, keyed("once", onceInput(minute(1), { title: "Again" })));
    expect(retitled.changed).toEqual(["title"]);
    expect(retitled.task.status).toBe("completed");

    const moved = await upsert(h, keyed("once", onceInput(minute(10), { title: "Again" })));
    expect(moved.changed).toEqual(["schedule"]);
    expect(moved.task.status).toBe("enabled");
    expect(moved.task.next_run_at).toBe(iso(minute(10)));
  });

  it("keeps the decided occurrences when the schedule changes", async () => {
    const h = harness();
    const { task } = await upsert(h, keyed("k", cronInput("*/5 * * * *")));
    h.clock.advance(5 * 60_000);
    await h.dispatch.admission.admitDue(h.clock.now, 10);
    const answer = await upsert(h, keyed("k", cronInput("*/10 * * * *")));
    expect(answer.task.decided_through).toBe(iso(minute(5)));
    expect(answer.task.next_run_at).toBe(iso(minute(10)));
    expect(await history(h, ALICE, task.id)).toHaveLength(1);
  });

  it("refuses a stale If-Match version and one naming a key no task has", async () => {
    const h = harness();
    await expect(upsert(h, keyed("k", cronInput("0 9 * * *")), 1)).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    await upsert(h, keyed("k", cronInput("0 9 * * *")));
    await expect(upsert(h, keyed("k", cronInput("0 8 * * *")), 7)).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    const answer = await upsert(h, keyed("k", cronInput("0 8 * * *")), 1);
    expect(answer.task.version).toBe(2);
  });

  it("refuses a malformed key naming the field, and a group without a key", async () => {
    const h = harness();
    const bad = await upsert(h, keyed("has space", cronInput("0 9 * * *"))).catch(
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).errors.map((e) => e.field)).toEqual(["key"]);
    const noKey = await h.tasks
      .create(ALICE, { ...cronInput("0 9 * * *"), group: "billing" }, h.clock.now)
      .catch((e: unknown) => e);
    expect((noKey as ValidationError).errors.map((e) => e.field)).toEqual(["group"]);
  });

  it("keeps keys per owner: another owner's key is another task", async () => {
    const h = harness();
    const mine = await upsert(h, keyed("shared", cronInput("0 9 * * *")));
    const theirs = await h.tasks.upsert(
      BOB,
      keyed("shared", cronInput("0 9 * * *")),
      null,
      h.clock.now,
    );
    expect(theirs.created).toBe(true);
    expect(theirs.task.id).not.toBe(mine.task.id);
    await expect(h.tasks.getByKey(BOB, "missing")).rejects.toMatchObject({ code: "not_found" });
  });

  it("refuses a create whose key is taken, and frees the key of a deleted task", async () => {
    const h = harness();
    const { task } = await h.tasks.create(ALICE, keyed("k", cronInput("0 9 * * *")), h.clock.now);
    await expect(
      h.tasks.create(ALICE, keyed("k", cronInput("0 9 * * *")), h.clock.now),
    ).rejects.toBeInstanceOf(KeyTakenError);
    await h.tasks.delete(ALICE, task.id, {}, h.clock.now);
    const again = await upsert(h, keyed("k", cronInput("0 9 * * *")));
    expect(again.created).toBe(true);
    expect(again.task.id).not.toBe(task.id);
  });

  it("lists by key and by group", async () => {
    const h = harness();
    await upsert(h, { ...keyed("a", cronInput("0 9 * * *")), group: "billing" });
    await upsert(h, { ...keyed("b", cronInput("0 9 * * *")), group: "billing" });
    await upsert(h, keyed("c", cronInput("0 9 * * *")));
    const byGroup = await h.tasks.list(ALICE, { group: "billing", limit: 50 });
    expect(byGroup.items.map((t) => t.key)).toEqual(["a", "b"]);
    const byKey = await h.tasks.list(ALICE, { key: "c", limit: 50 });
    expect(byKey.items.map((t) => t.key)).toEqual(["c"]);
    const moved = await upsert(h, keyed("a", cronInput("0 9 * * *")));
    expect(moved.changed).toEqual(["group"]);
    expect(moved.task.group).toBeNull();
  });
});

describe("TaskService.upsert as a dry run (issue 36)", () => {
  function plan(h: Harness, input: unknown, version: number | null = null) {
    return h.tasks.upsert(ALICE, input, version, h.clock.now, { dryRun: true });
  }

  it("answers the create it would make and writes nothing", async () => {
    const h = harness();
    const answer = await plan(
      h,
      keyed(
        "k",
        cronInput("30 2 * * *", {
          schedule: { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
        }),
      ),
    );
    expect(answer).toMatchObject({ created: true, changed: [] });
    expect(answer.task.key).toBe("k");
    expect(answer.warnings.join(" ")).toContain("Europe/Berlin");
    await expect(h.tasks.getByKey(ALICE, "k")).rejects.toMatchObject({ code: "not_found" });
  });

  it("names the fields it would change, with warnings only for a new schedule, and writes nothing", async () => {
    const h = harness();
    const at = (timezone: string) => ({ type: "cron" as const, cron: "30 2 * * *", timezone });
    const created = await upsert(h, keyed("k", cronInput("", { schedule: at("Europe/Berlin") })));
    expect(created.warnings).not.toEqual([]);
    const same = await plan(h, keyed("k", cronInput("", { schedule: at("Europe/Berlin") })));
    expect(same).toMatchObject({ created: false, changed: [], warnings: [] });
    expect(same.task.version).toBe(created.task.version);
    const retitled = await plan(
      h,
      keyed("k", cronInput("", { schedule: at("Europe/Berlin"), title: "Weekly" })),
    );
    expect(retitled).toMatchObject({ created: false, changed: ["title"], warnings: [] });
    const moved = await plan(h, keyed("k", cronInput("", { schedule: at("America/New_York") })));
    expect(moved.changed).toEqual(["schedule"]);
    expect(moved.warnings.join(" ")).toContain("America/New_York");
    expect(await reload(h, created.task.id)).toMatchObject({ title: "Daily report", version: 1 });
  });

  it("refuses a stale version as the upsert would, the absent task's version being 0", async () => {
    const h = harness();
    await expect(plan(h, keyed("k", cronInput("0 9 * * *")), 1)).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    await expect(plan(h, keyed("k", cronInput("0 9 * * *")), 0)).resolves.toMatchObject({
      created: true,
    });
    await upsert(h, keyed("k", cronInput("0 9 * * *")));
    await expect(plan(h, keyed("k", cronInput("0 9 * * *")), 2)).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    await expect(plan(h, keyed("k", cronInput("0 9 * * *")), 1)).resolves.toMatchObject({
      created: false,
    });
  });
});
