/**
 * TaskService management (docs/semantics.md#tasks, docs/semantics.md#task-statuses, docs/semantics.md#task-operations; reference 6.2 TestTaskManagement and TestOptimisticLocking,
 * adapted): validation before any write, thread checks through the ThreadLookup port, PATCH semantics
 * with a version compare-and-set, re-arming, owner scoping, listing, and create/edit warnings.
 */
import { describe, expect, it } from "vitest";
import type { TaskCreateInput } from "../../src/application/shapes/task-input.js";
import { threadId } from "../../src/domain/ids.js";
import { ValidationError } from "../../src/domain/errors.js";
import {
  ADMIN,
  ALICE,
  BOB,
  claimAndLaunch,
  createTask,
  cronInput,
  harness,
  history,
  iso,
  minute,
  onceInput,
  reload,
  T0,
} from "./harness.js";
import type { Harness } from "./harness.js";

/** The field names a rejected call reported. */
async function rejectedFields(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => e.field);
    throw error;
  }
  throw new Error("the call was accepted");
}

async function everyTask(h: Harness) {
  return (await h.tasks.list(ADMIN, { limit: 200 })).items;
}

const BERLIN_0230 = { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" } as const;

describe("TaskService.create", () => {
  const invalid: [string, TaskCreateInput | Record<string, unknown>, string][] = [
    ["a malformed cron", cronInput("not a cron"), "schedule.cron"],
    ["an empty title", cronInput("* * * * *", { title: "" }), "title"],
    ["a blank title", cronInput("* * * * *", { title: "   " }), "title"],
    ["a title over 200 characters", cronInput("* * * * *", { title: "t".repeat(201) }), "title"],
    [
      "an unknown time zone",
      cronInput("* * * * *", {
        schedule: { type: "cron", cron: "* * * * *", timezone: "Mars/Base" },
      }),
      "schedule.timezone",
    ],
    ["a once schedule in the past", onceInput(minute(-1)), "schedule.run_at"],
    [
      "an unregistered handler",
      cronInput("* * * * *", { target: { kind: "handler", name: "nope" } }),
      "target.name",
    ],
    [
      "an unconfigured agent server",
      cronInput("* * * * *", { target: { kind: "agent", server: "nope", assistant_id: "a" } }),
      "target.server",
    ],
    [
      "reuse_thread without a thread",
      cronInput("* * * * *", { context: { mode: "reuse_thread" } }),
      "context.thread_id",
    ],
    [
      "a thread id that climbs directories",
      cronInput("* * * * *", { context: { mode: "reuse_thread", thread_id: ".." } }),
      "context.thread_id",
    ],
    [
      "an unknown overlap policy",
      { ...cronInput("* * * * *"), options: { overlap: "sometimes" } },
      "options.overlap",
    ],
    [
      "a retry max_delay below its initial delay",
      cronInput("* * * * *", { options: { retry: { initial: "PT1M", max_delay: "PT10S" } } }),
      "options.retry.max_delay",
    ],
    [
      "33 metadata keys",
      cronInput("* * * * *", {
        metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])),
      }),
      "metadata",
    ],
  ];

  it.each(invalid)("refuses %s before any write, naming the field", async (_what, input, field) => {
    const h = harness();
    await expect(rejectedFields(h.tasks.create(ALICE, input, T0))).resolves.toContain(field);
    expect(await everyTask(h)).toEqual([]);
    expect(h.signals.wakes).toBe(0);
    expect(h.threads.calls).toEqual([]);
    expect(await h.dispatch.wakeUps.nextWakeAt()).toBeNull();
  });

  it("reports every bad field of the input at once", async () => {
    const h = harness();
    const fields = await rejectedFields(
      h.tasks.create(ALICE, { title: "", schedule: { type: "cron" }, target: { kind: "x" } }, T0),
    );
    expect(fields).toEqual(expect.arrayContaining(["title", "target.kind"]));
  });

  it("fills in the defaults and the server-owned fields, and wakes the coordinator", async () => {
    const h = harness();
    const { task, warnings } = await h.tasks.create(ALICE, cronInput("*/5 * * * *"), T0);
    expect(warnings).toEqual([]);
    expect(task).toMatchObject({
      owner: "alice",
      title: "Daily report",
      description: null,
      schedule: { type: "cron", cron: "*/5 * * * *", timezone: "UTC" },
      context: { mode: "fresh_thread_per_run", thread_id: null },
      options: {
        overlap: "skip",
        catch_up: { window: "PT1H", policy: "latest" },
        late_after: "PT1M",
        retry: { max_attempts: 1, initial: "PT10S", max_delay: "PT10M" },
        run_timeout: "PT1H",
        queue_timeout: "PT24H",
      },
      metadata: {},
      status: "enabled",
      next_run_at: iso(minute(5)),
      decided_through: iso(T0),
      last_run_at: null,
      last_run_id: null,
      last_error: null,
      run_count: 0,
      admitted_count: 0,
      version: 1,
      created_at: iso(T0),
      updated_at: iso(T0),
    });
    expect(h.signals.wakes).toBe(1);
    expect(await h.tasks.get(ALICE, task.id)).toEqual(task);
  });

  it("requires a reused thread to exist for the owner", async () => {
    const h = harness();
    const input = cronInput("*/5 * * * *", {
      context: { mode: "reuse_thread", thread_id: "thread-1" },
    });
    await expect(h.tasks.create(ALICE, input, T0)).rejects.toMatchObject({
      code: "not_found",
      resource: "thread",
      id: "thread-1",
    });
    expect(h.threads.calls).toEqual([
      { owner: ALICE.owner, threadScope: "agent:main", threadId: threadId("thread-1") },
    ]);
    expect(await everyTask(h)).toEqual([]);

    h.threads.add(ALICE.owner, "agent:main", "thread-1");
    const task = await createTask(h, input);
    expect(task.context).toEqual({ mode: "reuse_thread", thread_id: "thread-1" });
    // Another owner cannot bind the same thread; a handler's threads live in their own scope.
    await expect(h.tasks.create(BOB, input, T0)).rejects.toMatchObject({ code: "not_found" });
    await expect(
      h.tasks.create(ALICE, { ...input, target: { kind: "handler", name: "log" } }, T0),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(h.threads.calls.at(-1)).toMatchObject({ threadScope: `handler:${ALICE.owner}` });
    expect(await everyTask(h)).toHaveLength(1);
  });
});

describe("TaskService.create and update warnings", () => {
  it("warns about each DST transition in the next 366 days that moves or repeats a fire", async () => {
    const h = harness();
    const { warnings } = await h.tasks.create(
      ALICE,
      cronInput("30 2 * * *", { schedule: BERLIN_0230 }),
      T0,
    );
    // 2030-03-31 (spring forward) and 2030-10-27 (fall back); 2031's are beyond the horizon.
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/Europe\/Berlin.*2030-03-31.*02:30 does not exist/);
    expect(warnings[1]).toMatch(/Europe\/Berlin.*2030-10-27.*repeated time/);
  });

  it("warns when a once task's local run_at falls in a DST gap", async () => {
    const h = harness();
    const { task, warnings } = await h.tasks.create(
      ALICE,
      onceInput(minute(0), {
        schedule: { type: "once", run_at: "2030-03-31T02:30:00", timezone: "Europe/Berlin" },
      }),
      T0,
    );
    expect(task.next_run_at).toBe("2030-03-31T01:00:00Z");
    expect(warnings).toEqual([expect.stringMatching(/02:30:00 does not exist in Europe\/Berlin/)]);
  });

  it("does not warn about DST for a zone without it or a time it does not touch", async () => {
    const h = harness();
    expect((await h.tasks.create(ALICE, cronInput("30 2 * * *"), T0)).warnings).toEqual([]);
    const noon = { type: "cron", cron: "0 12 * * *", timezone: "Europe/Berlin" } as const;
    expect(
      (await h.tasks.create(ALICE, cronInput("0 12 * * *", { schedule: noon }), T0)).warnings,
    ).toEqual([]);
  });

  it("warns when the jitter is larger than the time between occurrences", async () => {
    const h = harness();
    const wide = { type: "cron", cron: "* * * * *", timezone: "UTC", jitter: "PT2M" } as const;
    const narrow = { ...wide, jitter: "PT30S" };
    const warned = await h.tasks.create(ALICE, cronInput("* * * * *", { schedule: wide }), T0);
    expect(warned.warnings).toEqual([expect.stringMatching(/jitter is larger/)]);
    const quiet = await h.tasks.create(ALICE, cronInput("* * * * *", { schedule: narrow }), T0);
    expect(quiet.warnings).toEqual([]);
  });

  it("warns on an edit that changes the schedule, and only then", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const edited = await h.tasks.update(ALICE, task.id, { schedule: BERLIN_0230 }, null, T0);
    expect(edited.warnings).toHaveLength(2);
    const renamed = await h.tasks.update(ALICE, task.id, { title: "Renamed" }, null, T0);
    expect(renamed.warnings).toEqual([]);
  });
});

describe("TaskService.update", () => {
  it("leaves omitted fields as they were", async () => {
    const h = harness();
    h.threads.add(ALICE.owner, "agent:main", "thread-1");
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", {
        description: "every five minutes",
        context: { mode: "reuse_thread", thread_id: "thread-1" },
        options: { overlap: "buffer_one", retry: { max_attempts: 3 } },
        metadata: { team: "ops" },
      }),
    );
    const lookups = h.threads.calls.length;
    const { task: edited } = await h.tasks.update(
      ALICE,
      task.id,
      { title: "Renamed" },
      task.version,
      minute(1),
    );
    expect(edited).toEqual({
      ...task,
      title: "Renamed",
      version: task.version + 1,
      updated_at: iso(minute(1)),
    });
    // Neither the thread nor the target moved: the thread is not looked up again.
    expect(h.threads.calls).toHaveLength(lookups);
    expect(await h.tasks.get(ALICE, task.id)).toEqual(edited);
  });

  it("merges a partial options patch into the task's current options", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "buffer_one", retry: { max_attempts: 3 } } }),
    );
    const { task: edited } = await h.tasks.update(
      ALICE,
      task.id,
      { options: { retry: { initial: "PT30S" } }, description: "now described" },
      null,
      minute(1),
    );
    expect(edited.options).toEqual({
      ...task.options,
      retry: { max_attempts: 3, initial: "PT30S", max_delay: "PT10M" },
    });
    expect(edited.description).toBe("now described");
    const { task: cleared } = await h.tasks.update(
      ALICE,
      task.id,
      { description: null },
      null,
      minute(2),
    );
    expect(cleared.description).toBeNull();
  });

  it("refuses a stale version and changes nothing", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const { task: first } = await h.tasks.update(ALICE, task.id, { title: "One" }, 1, minute(1));
    expect(first.version).toBe(2);
    await expect(
      h.tasks.update(ALICE, task.id, { title: "Two", metadata: { a: "b" } }, 1, minute(2)),
    ).rejects.toMatchObject({ code: "version_conflict", expected: 1, actual: 2 });
    expect(await h.tasks.get(ALICE, task.id)).toEqual(first);
    await expect(
      h.tasks.delete(ALICE, task.id, { expectedVersion: 1 }, minute(2)),
    ).rejects.toMatchObject({ code: "version_conflict" });
    expect(await h.tasks.get(ALICE, task.id)).toEqual(first);
  });

  it("keeps the version through launches, completions, pause and resume", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [run] = await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(
      run!.id,
      { status: "failed", error: "x" },
      minute(6),
    );
    await h.tasks.pause(ALICE, task.id, {}, minute(7));
    await h.tasks.resume(ALICE, task.id, {}, minute(8));
    expect((await reload(h, task.id)).version).toBe(1);
    // An edit based on the version read at create still applies.
    const { task: edited } = await h.tasks.update(
      ALICE,
      task.id,
      { title: "Edited" },
      1,
      minute(9),
    );
    expect(edited).toMatchObject({ version: 2, run_count: 1, last_error: "x", status: "enabled" });
  });

  it("refuses an invalid patch before any write", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await expect(
      rejectedFields(
        h.tasks.update(
          ALICE,
          task.id,
          { schedule: { type: "cron", cron: "bad" } },
          null,
          minute(1),
        ),
      ),
    ).resolves.toEqual(["schedule.cron"]);
    await expect(
      rejectedFields(h.tasks.update(ALICE, task.id, { title: "" }, null, minute(1))),
    ).resolves.toEqual(["title"]);
    await expect(
      rejectedFields(
        h.tasks.update(
          ALICE,
          task.id,
          { target: { kind: "handler", name: "nope" } },
          null,
          minute(1),
        ),
      ),
    ).resolves.toEqual(["target.name"]);
    expect(await h.tasks.get(ALICE, task.id)).toEqual(task);
  });

  it("refuses to bind the task to a thread its owner cannot use", async () => {
    const h = harness();
    h.threads.add(ALICE.owner, "agent:main", "thread-1");
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { context: { mode: "reuse_thread", thread_id: "thread-1" } }),
    );
    await expect(
      h.tasks.update(
        ALICE,
        task.id,
        { context: { mode: "reuse_thread", thread_id: "thread-2" } },
        null,
        minute(1),
      ),
    ).rejects.toMatchObject({ code: "not_found", resource: "thread" });
    // Moving the target moves the thread's scope: thread-1 is unknown on server `other`.
    await expect(
      h.tasks.update(
        ALICE,
        task.id,
        { target: { kind: "agent", server: "other", assistant_id: "reporter" } },
        null,
        minute(1),
      ),
    ).rejects.toMatchObject({ code: "not_found", resource: "thread" });
    expect(await h.tasks.get(ALICE, task.id)).toEqual(task);
    const { task: fresh } = await h.tasks.update(
      ALICE,
      task.id,
      { context: { mode: "fresh_thread_per_run" } },
      null,
      minute(1),
    );
    expect(fresh.context).toEqual({ mode: "fresh_thread_per_run", thread_id: null });
  });

  it("keeps decided_through on a schedule edit, so no occurrence is decided twice", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const { task: edited } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "cron", cron: "*/2 * * * *" } },
      null,
      minute(5, 30_000),
    );
    expect(edited).toMatchObject({
      decided_through: iso(minute(5)),
      next_run_at: iso(minute(6)),
      admitted_count: 1,
      status: "enabled",
    });
    await h.dispatch.admission.admitDue(minute(6), 10);
    const runs = await history(h, ALICE, task.id);
    expect(runs.map((r) => [r.scheduled_for, r.status, r.reason])).toEqual([
      [iso(minute(6)), "skipped", "overlap"],
      [iso(minute(5)), "queued", null],
    ]);
  });

  it("re-arms a terminal task whose schedule edit has a future occurrence", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [run] = await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(
      run!.id,
      { status: "failed", error: "boom" },
      minute(6),
    );
    expect(await reload(h, task.id)).toMatchObject({ status: "failed", next_run_at: null });

    // An edit that leaves the schedule alone leaves the task terminal.
    const { task: renamed } = await h.tasks.update(
      ALICE,
      task.id,
      { title: "Retitled" },
      null,
      minute(7),
    );
    expect(renamed).toMatchObject({ status: "failed", last_error: "boom", next_run_at: null });

    const { task: rearmed } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "once", run_at: iso(minute(60)) } },
      null,
      minute(8),
    );
    expect(rearmed).toMatchObject({
      status: "enabled",
      next_run_at: iso(minute(60)),
      decided_through: iso(minute(8)),
      last_error: null,
      run_count: 1,
    });
    const report = await h.dispatch.admission.admitDue(minute(60), 10);
    expect(report.queuedRuns.map((r) => r.scheduledFor)).toEqual([minute(60)]);
  });

  it("re-arms a cancelled cron task from now, deciding nothing inside the cancelled time", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.tasks.cancel(ALICE, task.id, minute(1));
    const { task: rearmed } = await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "cron", cron: "*/10 * * * *" } },
      null,
      minute(32),
    );
    expect(rearmed).toMatchObject({
      status: "enabled",
      decided_through: iso(minute(32)),
      next_run_at: iso(minute(40)),
    });
    await h.dispatch.admission.admitDue(minute(40), 10);
    const runs = await history(h, ALICE, task.id);
    expect(runs.map((r) => [r.scheduled_for, r.status])).toEqual([[iso(minute(40)), "queued"]]);
  });
});

describe("TaskService owner scoping", () => {
  it("reports another owner's task and runs as not found on every method, changing nothing", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "allow_all" } }),
    );
    const run = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "mine" }, minute(1));
    const before = await h.tasks.get(ALICE, task.id);
    const runsBefore = await history(h, ALICE, task.id);
    const now = minute(2);

    const attempts: [string, () => Promise<unknown>][] = [
      ["get", () => h.tasks.get(BOB, task.id)],
      ["update", () => h.tasks.update(BOB, task.id, { title: "Bob's now" }, null, now)],
      ["pause", () => h.tasks.pause(BOB, task.id, { cancelRunning: true }, now)],
      ["resume", () => h.tasks.resume(BOB, task.id, { catchUp: "all" }, now)],
      ["cancel", () => h.tasks.cancel(BOB, task.id, now)],
      ["trigger", () => h.tasks.trigger(BOB, task.id, { idempotencyKey: "bob" }, now)],
      [
        "backfill",
        () => h.tasks.backfill(BOB, task.id, { from: iso(minute(-30)), to: iso(minute(0)) }, now),
      ],
      ["delete", () => h.tasks.delete(BOB, task.id, { force: true }, now)],
      ["listRuns", () => h.tasks.listRuns(BOB, task.id, { limit: 10 })],
      ["getRun", () => h.tasks.getRun(BOB, run.id)],
      ["cancelRun", () => h.tasks.cancelRun(BOB, run.id, now)],
      ["preview", () => h.tasks.preview(BOB, task.id, 3, now)],
    ];
    for (const [method, call] of attempts) {
      await expect(call(), method).rejects.toMatchObject({ code: "not_found" });
    }
    expect((await h.tasks.list(BOB, { limit: 10 })).items).toEqual([]);
    expect(await h.tasks.get(ALICE, task.id)).toEqual(before);
    expect(await history(h, ALICE, task.id)).toEqual(runsBefore);
    expect(h.signals.cancelRequests).toEqual([]);
  });

  it("lets an admin see and act on every owner's tasks", async () => {
    const h = harness();
    const alices = await createTask(h, cronInput("*/5 * * * *", { title: "alice's" }), ALICE);
    const bobs = await createTask(h, cronInput("*/5 * * * *", { title: "bob's" }), BOB);
    const all = await h.tasks.list(ADMIN, { limit: 10 });
    expect(all.items.map((t) => [t.title, t.owner])).toEqual([
      ["alice's", "alice"],
      ["bob's", "bob"],
    ]);
    expect(await h.tasks.get(ADMIN, alices.id)).toEqual(alices);
    const paused = await h.tasks.pause(ADMIN, bobs.id, {}, minute(1));
    expect(paused).toMatchObject({ status: "paused", owner: "bob" });
    const run = await h.tasks.trigger(ADMIN, bobs.id, { idempotencyKey: "admin" }, minute(2));
    expect(run.owner).toBe("bob");
    expect(await h.tasks.getRun(BOB, run.id)).toEqual(run);
    expect((await h.tasks.list(ALICE, { limit: 10 })).items.map((t) => t.id)).toEqual([alices.id]);
  });
});

describe("TaskService.list", () => {
  it("pages through one owner's tasks in creation order", async () => {
    const h = harness();
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.set(minute(i));
      mine.push((await createTask(h, cronInput("*/5 * * * *", { title: `alice ${i}` }))).id);
      if (i % 2 === 0) await createTask(h, cronInput("*/5 * * * *", { title: `bob ${i}` }), BOB);
    }
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await h.tasks.list(ALICE, {
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages.push(page.items.map((t) => t.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(mine);
    expect((await h.tasks.list(BOB, { limit: 10 })).items).toHaveLength(3);
    await expect(h.tasks.list(ALICE, { limit: 2, cursor: "not-a-cursor" })).rejects.toMatchObject({
      code: "validation_failed",
    });
  });

  it("lists the tasks bound to a thread, and filters by status and target kind", async () => {
    const h = harness();
    h.threads
      .add(ALICE.owner, "agent:main", "thread-a")
      .add(ALICE.owner, `handler:${ALICE.owner}`, "thread-a")
      .add(ALICE.owner, "agent:main", "thread-b")
      .add(BOB.owner, "agent:main", "thread-a");
    const onA = cronInput("*/5 * * * *", {
      context: { mode: "reuse_thread", thread_id: "thread-a" },
    });
    const agentA = await createTask(h, { ...onA, title: "agent on a" });
    const handlerA = await createTask(h, {
      ...onA,
      title: "handler on a",
      target: { kind: "handler", name: "log" },
    });
    await createTask(
      h,
      cronInput("*/5 * * * *", { context: { mode: "reuse_thread", thread_id: "thread-b" } }),
    );
    await createTask(h, cronInput("*/5 * * * *", { title: "fresh" }));
    const bobsA = await createTask(h, { ...onA, title: "bob on a" }, BOB);

    const thread = { threadId: threadId("thread-a") };
    const titles = async (actor: typeof ALICE, query: Parameters<Harness["tasks"]["list"]>[1]) =>
      (await h.tasks.list(actor, query)).items.map((t) => t.title);
    expect(await titles(ALICE, { limit: 10, thread })).toEqual([agentA.title, handlerA.title]);
    expect(
      await titles(ALICE, { limit: 10, thread: { ...thread, threadScope: "agent:main" } }),
    ).toEqual([agentA.title]);
    expect(await titles(BOB, { limit: 10, thread })).toEqual([bobsA.title]);
    expect(await titles(ALICE, { limit: 10, targetKind: "handler" })).toEqual([handlerA.title]);
    await h.tasks.pause(ALICE, agentA.id, {}, minute(1));
    expect(await titles(ALICE, { limit: 10, status: "paused" })).toEqual([agentA.title]);
  });
});
