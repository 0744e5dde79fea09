/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * DeerFlow's router tests, ported (reference 6.5 `test_schedule_router.py`, 6.6
 * `test_scheduled_task_router_behavior.py`, `test_scheduled_task_router.py` and the API-visible cases of
 * `test_scheduled_task_schedules.py`) to `serve --deerflow-api` over a fake DeerFlow gateway. Each case
 * passes as DeerFlow's, or is rewritten to the deviation docs/targets.md lists (named "deviation").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let fake: FakeAgentServer;
let t: TestServer;
let alice: string;
let bob: string;

const TASK_FIELDS = [
  "id",
  "thread_id",
  "context_mode",
  "title",
  "prompt",
  "schedule_type",
  "schedule_spec",
  "timezone",
  "status",
  "next_run_at",
  "last_run_at",
  "last_run_id",
  "last_thread_id",
  "last_error",
  "run_count",
  "created_at",
  "updated_at",
].sort();

beforeAll(async () => {
  fake = await FakeAgentServer.start({ flavor: "deerflow", autoFinishAfterMs: 50 });
  t = await startTestServer({
    runCoordinator: true,
    agentServers: [
      serverConfig("deer", fake.url, {
        flavor: "deerflow",
        pollIntervalMs: 100,
        requestTimeoutMs: 2000,
      }),
    ],
    deerflowApi: "deer",
  });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await t.stop();
  await fake.close();
});

const api = (method: string, path: string, token: string | undefined, body?: unknown) =>
  call(t.url, method, `/api${path}`, {
    ...(token === undefined ? {} : { token }),
    ...(body === undefined ? {} : { body }),
  });

const cron = (fields: Record<string, unknown> = {}) => ({
  title: "daily digest",
  prompt: "Summarise today's GitHub trending repositories",
  schedule_type: "cron",
  schedule_spec: { cron: "0 9 * * *" },
  timezone: "Europe/Berlin",
  ...fields,
});
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const once = (fields: Record<string, unknown> = {}) => ({
  title: "reminder",
  prompt: "Remind me to stretch",
  schedule_type: "once",
  schedule_spec: { run_at: inSeconds(3600) },
  timezone: "UTC",
  ...fields,
});

async function created(body: Record<string, unknown> = cron(), token = alice) {
  const answer = await api("POST", "/scheduled-tasks", token, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

function thread(owner?: string): string {
  const id = `thread-${Math.random().toString(36).slice(2)}`;
  fake.createThread(id, owner === undefined ? {} : { punctual_owner: owner });
  return id;
}

async function runsOf(id: string, token = alice): Promise<any[]> {
  return (await api("GET", `/scheduled-tasks/${id}/runs`, token)).body;
}

describe("TestCreate", () => {
  it("creates a cron task and renders it", async () => {
    const task = await created();
    expect(task).toMatchObject({
      title: "daily digest",
      prompt: "Summarise today's GitHub trending repositories",
      schedule_type: "cron",
      schedule_spec: { cron: "0 9 * * *" },
      timezone: "Europe/Berlin",
      status: "enabled",
      context_mode: "fresh_thread_per_run",
      thread_id: null,
      run_count: 0,
      last_run_id: null,
    });
    // Deviation: timestamps end in Z (DeerFlow writes +00:00).
    expect(task.next_run_at).toMatch(/T0[78]:00:00Z$/);
  });

  it("publishes no server-owned field: exactly the frontend's ScheduledTask", async () => {
    expect(Object.keys(await created()).sort()).toEqual(TASK_FIELDS);
  });

  it("needs no thread for a fresh-thread task, and drops one given", async () => {
    expect((await created(cron({ thread_id: thread() }))).thread_id).toBeNull();
  });

  it("binds the thread of a reuse_thread task", async () => {
    const id = thread();
    const task = await created(cron({ context_mode: "reuse_thread", thread_id: id }));
    expect(task).toMatchObject({ context_mode: "reuse_thread", thread_id: id });
  });

  it.each([
    ["reuse_thread without a thread", cron({ context_mode: "reuse_thread" }), /requires thread_id/],
    ["an unknown schedule_type", cron({ schedule_type: "interval" }), /Unsupported schedule_type/],
    ["a cron without its key", cron({ schedule_spec: { expr: "0 9 * * *" } }), /requires/],
    ["a malformed cron", cron({ schedule_spec: { cron: "61 * * * *" } }), /cron/],
    ["a seconds field", cron({ schedule_spec: { cron: "0 0 9 * * *" } }), /exactly 5 fields/],
    [
      "an unknown timezone",
      cron({ timezone: "Mars/Olympus" }),
      /^Unknown timezone: Mars\/Olympus$/,
    ],
    [
      "a once in the past",
      once({ schedule_spec: { run_at: inSeconds(-60) } }),
      /^once schedule must be in the future$/,
    ],
    ["an unknown context_mode", cron({ context_mode: "shared" }), /Unsupported context_mode/],
    ["an empty title", cron({ title: "" }), null],
    ["a thread id DeerFlow refuses", cron({ thread_id: "../etc" }), null],
  ])("refuses %s with 422", async (_name, body, detail) => {
    const answer = await api("POST", "/scheduled-tasks", alice, body);
    expect(answer.status).toBe(422);
    if (detail !== null) expect(answer.body.detail).toMatch(detail);
    else expect(answer.body.detail[0]).toMatchObject({ loc: expect.arrayContaining(["body"]) });
  });

  it("refuses a once closer than the minimum delay (deviation: punctual's 1 s, not 60 s)", async () => {
    const soon = await api(
      "POST",
      "/scheduled-tasks",
      alice,
      // Now, with milliseconds: rounded up to the next whole second, still under the 1 s minimum.
      once({ schedule_spec: { run_at: inSeconds(0) } }),
    );
    expect(soon.status).toBe(422);
    expect((await created(once({ schedule_spec: { run_at: inSeconds(30) } }))).status).toBe(
      "enabled",
    );
  });

  it("answers 404 for an unknown thread and for someone else's", async () => {
    for (const id of ["no-such-thread", thread("bob")]) {
      const answer = await api(
        "POST",
        "/scheduled-tasks",
        alice,
        cron({ context_mode: "reuse_thread", thread_id: id }),
      );
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ detail: "Thread not found" });
    }
  });

  it("answers 401 to an anonymous caller", async () => {
    const answer = await api("POST", "/scheduled-tasks", undefined, cron());
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: "Authentication required" });
  });

  it("takes the owner from the token, never from the body", async () => {
    const task = await created({ ...cron(), user_id: "bob" });
    expect((await api("GET", `/scheduled-tasks/${task.id}`, bob)).status).toBe(404);
    expect((await api("GET", `/scheduled-tasks/${task.id}`, alice)).status).toBe(200);
  });

  it("reads a naive run_at in the task's zone, and a cron in its zone (schedules)", async () => {
    const naive = await created(
      once({ schedule_spec: { run_at: "2030-06-01T09:00:00" }, timezone: "Asia/Shanghai" }),
    );
    expect(naive.next_run_at).toBe("2030-06-01T01:00:00Z");
    // DeerFlow answers run_at as an instant (its frontend reads it so), not as the wall time written.
    expect(naive.schedule_spec).toEqual({ run_at: "2030-06-01T01:00:00Z" });
    const aware = await created(once({ schedule_spec: { run_at: "2030-06-01T09:00:00+02:00" } }));
    expect(aware.next_run_at).toBe("2030-06-01T07:00:00Z");
    const shanghai = await created(cron({ timezone: "Asia/Shanghai" }));
    expect(shanghai.next_run_at).toMatch(/T01:00:00Z$/);
  });
});

describe("TestRead", () => {
  it("fetches by id, lists the caller's own, and hides other users' tasks as 404", async () => {
    const mine = await created(cron({ title: "mine" }));
    const theirs = await created(cron({ title: "theirs" }), bob);
    expect((await api("GET", `/scheduled-tasks/${mine.id}`, alice)).body).toEqual(mine);
    expect((await api("GET", "/scheduled-tasks/task-unknown", alice)).status).toBe(404);
    const other = await api("GET", `/scheduled-tasks/${theirs.id}`, alice);
    expect(other).toMatchObject({ status: 404, body: { detail: "Scheduled task not found" } });
    const listed = (await api("GET", "/scheduled-tasks", alice)).body as any[];
    expect(listed.map((task) => task.id)).toContain(mine.id);
    expect(listed.map((task) => task.id)).not.toContain(theirs.id);
    // Newest first, as DeerFlow lists them.
    const created_at = listed.map((task) => task.created_at as string);
    expect([...created_at].sort().reverse()).toEqual(created_at);
  });

  it("answers 401 to an anonymous listing, as DeerFlow's main does", async () => {
    const answer = await api("GET", "/scheduled-tasks", undefined);
    expect(answer).toMatchObject({ status: 401, body: { detail: "Authentication required" } });
  });

  it("lists a thread's tasks, only those bound to it", async () => {
    const id = thread();
    const bound = await created(cron({ context_mode: "reuse_thread", thread_id: id }));
    await created(cron());
    const listed = (await api("GET", `/threads/${id}/scheduled-tasks`, alice)).body as any[];
    expect(listed.map((task) => task.id)).toEqual([bound.id]);
    expect((await api("GET", `/threads/${id}/scheduled-tasks`, bob)).body).toEqual([]);
  });

  it("answers 404 with DeerFlow's text for a missing thread and for another owner's", async () => {
    for (const id of ["no-such-thread", thread("bob")]) {
      const answer = await api("GET", `/threads/${id}/scheduled-tasks`, alice);
      expect(answer).toMatchObject({ status: 404, body: { detail: `Thread ${id} not found` } });
    }
  });

  it.each(["a.b", "x".repeat(65)])("refuses the thread id %s with 422", async (bad) => {
    expect((await api("GET", `/threads/${bad}/scheduled-tasks`, alice)).status).toBe(422);
  });
});

describe("TestUpdate", () => {
  it("changes the title in place", async () => {
    const task = await created();
    const patched = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, { title: "renamed" });
    expect(patched.body).toMatchObject({ id: task.id, title: "renamed", prompt: task.prompt });
  });

  it("treats null as not supplied", async () => {
    const task = await created();
    const patched = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      title: null,
      prompt: null,
      schedule_spec: null,
      timezone: null,
    });
    expect(patched.body).toMatchObject({
      title: task.title,
      prompt: task.prompt,
      schedule_spec: task.schedule_spec,
    });
  });

  it("keeps the timezone when the spec changes, and the spec when the timezone changes", async () => {
    const task = await created();
    const spec = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      schedule_spec: { cron: "30 7 * * 1-5" },
    });
    expect(spec.body).toMatchObject({
      schedule_spec: { cron: "30 7 * * 1-5" },
      timezone: "Europe/Berlin",
    });
    const zone = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      timezone: "America/New_York",
    });
    expect(zone.body).toMatchObject({
      schedule_spec: { cron: "30 7 * * 1-5" },
      timezone: "America/New_York",
    });
  });

  it("keeps a once task's instant when only its timezone changes", async () => {
    const task = await created(once({ schedule_spec: { run_at: "2030-06-01T09:00:00Z" } }));
    const zone = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      timezone: "Asia/Tokyo",
    });
    expect(zone.body).toMatchObject({ timezone: "Asia/Tokyo", next_run_at: task.next_run_at });
  });

  it("changes the prompt, the run's one user message", async () => {
    const task = await created();
    const patched = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, { prompt: "new" });
    expect(patched.body.prompt).toBe("new");
  });

  it("answers 404 for an unknown task and 422 for a malformed schedule", async () => {
    expect((await api("PATCH", "/scheduled-tasks/nope", alice, { title: "x" })).status).toBe(404);
    const task = await created();
    const bad = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      schedule_spec: { cron: "not a cron" },
    });
    expect(bad.status).toBe(422);
  });

  it("re-arms a terminal once task pushed into the future", async () => {
    const task = await created(once());
    expect(
      (await call(t.url, "POST", `/v1/tasks/${task.id}/cancel`, { token: alice })).status,
    ).toBe(200);
    expect((await api("GET", `/scheduled-tasks/${task.id}`, alice)).body.status).toBe("cancelled");
    const rearmed = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      schedule_spec: { run_at: inSeconds(7200) },
    });
    expect(rearmed.body.status).toBe("enabled");
  });

  it("edits a task whose run is active (deviation: no running status, so no 409)", async () => {
    const task = await created(cron({ prompt: "slow" }));
    fake.setMode({ kind: "slow", ms: 300 });
    try {
      await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
      const patched = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, { title: "busy" });
      expect(patched.status).toBe(200);
      // Two edits without a version both land (DeerFlow's ConcurrentUpdateError has no counterpart).
      const again = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, { title: "twice" });
      expect(again.body.title).toBe("twice");
    } finally {
      fake.setMode({ kind: "normal" });
    }
  });
});

describe("TestPauseResume", () => {
  it("pauses, then resumes", async () => {
    const task = await created();
    const paused = await api("POST", `/scheduled-tasks/${task.id}/pause`, alice);
    expect(paused.body.status).toBe("paused");
    const resumed = await api("POST", `/scheduled-tasks/${task.id}/resume`, alice);
    expect(resumed.body.status).toBe("enabled");
    expect(resumed.body.next_run_at).not.toBeNull();
  });

  it("answers 404 for an unknown task", async () => {
    expect((await api("POST", "/scheduled-tasks/nope/pause", alice)).status).toBe(404);
    expect((await api("POST", "/scheduled-tasks/nope/resume", alice)).status).toBe(404);
  });
});

describe("TestTrigger", () => {
  it("queues a manual run and answers 202 (deviation: not 200 on the launch's outcome)", async () => {
    const task = await created();
    const answer = await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ id: task.id, triggered: true, run_id: expect.any(String) });
    await waitFor(
      async () => ((await runsOf(task.id))[0]?.status === "success" ? true : undefined),
      { timeoutMs: 10_000, what: "the triggered run to succeed" },
    );
    const [run] = await runsOf(task.id);
    expect(run).toMatchObject({ id: answer.body.run_id, trigger: "manual", task_id: task.id });
    const after = (await api("GET", `/scheduled-tasks/${task.id}`, alice)).body;
    expect(after).toMatchObject({ run_count: 1, last_run_id: run.run_id });
    expect(after.last_thread_id).toBe(run.thread_id);
    // DeerFlow's scheduler sends the prompt as one user message, non-interactive.
    const sent = fake.runsOf(run.thread_id)[0]!;
    expect(sent.kwargs.input).toEqual({
      messages: [{ role: "user", content: "Summarise today's GitHub trending repositories" }],
    });
  });

  it("queues behind a busy thread (deviation: DeerFlow answers 409)", async () => {
    const id = thread();
    fake.keepBusy(id);
    const task = await created(cron({ context_mode: "reuse_thread", thread_id: id }));
    const answer = await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
    expect(answer.status).toBe(202);
    await waitFor(
      async () => ((await runsOf(task.id))[0]?.status === "queued" ? true : undefined),
      { timeoutMs: 10_000, what: "the run to wait for the thread" },
    );
    fake.release(id);
    await waitFor(
      async () => ((await runsOf(task.id))[0]?.status === "success" ? true : undefined),
      { timeoutMs: 20_000, what: "the run to succeed once the thread is free" },
    );
  });

  it("queues behind the task's active run (deviation: DeerFlow answers 409)", async () => {
    const task = await created();
    fake.setMode({ kind: "slow", ms: 500 });
    try {
      const first = await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
      const second = await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
      expect([first.status, second.status]).toEqual([202, 202]);
    } finally {
      fake.setMode({ kind: "normal" });
    }
  });

  it("records a launch the server refuses as a failed run (deviation: DeerFlow answers 502)", async () => {
    const task = await created();
    fake.setMode({ kind: "reply", status: 400, body: { detail: "Model 'x' is not allowed" } });
    try {
      expect((await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice)).status).toBe(202);
      await waitFor(
        async () => ((await runsOf(task.id))[0]?.status === "failed" ? true : undefined),
        { timeoutMs: 10_000, what: "the refused launch to fail" },
      );
    } finally {
      fake.setMode({ kind: "normal" });
    }
    expect((await runsOf(task.id))[0].error).toMatch(/not allowed/);
  });

  it("answers 404 for an unknown task, and triggers a paused task, which stays paused", async () => {
    expect((await api("POST", "/scheduled-tasks/nope/trigger", alice)).status).toBe(404);
    const task = await created();
    await api("POST", `/scheduled-tasks/${task.id}/pause`, alice);
    expect((await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice)).status).toBe(202);
    expect((await api("GET", `/scheduled-tasks/${task.id}`, alice)).body.status).toBe("paused");
  });
});

describe("a once task triggered by hand (DeerFlow's once-task lifecycle)", () => {
  const settled = async (id: string) => {
    const task = (await api("GET", `/scheduled-tasks/${id}`, alice)).body;
    return task.status === "enabled" || task.status === "paused" ? undefined : task;
  };

  it("takes the occurrence: the task completes when the run succeeds and does not fire at run_at", async () => {
    const task = await created(once());
    const answer = await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
    expect(answer.status).toBe(202);
    const done = await waitFor(() => settled(task.id), {
      timeoutMs: 10_000,
      what: "the once task to end with its run",
    });
    expect(done).toMatchObject({ status: "completed", next_run_at: null, run_count: 1 });
    const runs = await runsOf(task.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      id: answer.body.run_id,
      trigger: "manual",
      status: "success",
      scheduled_for: task.schedule_spec.run_at,
    });
  });

  it("ends a paused once task too, and fails it when the run fails", async () => {
    const task = await created(once());
    await api("POST", `/scheduled-tasks/${task.id}/pause`, alice);
    fake.setMode({ kind: "reply", status: 400, body: { detail: "Model 'x' is not allowed" } });
    try {
      expect((await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice)).status).toBe(202);
      const done = await waitFor(() => settled(task.id), {
        timeoutMs: 10_000,
        what: "the paused once task to fail with its run",
      });
      expect(done).toMatchObject({ status: "failed", next_run_at: null });
      expect(done.last_error).toMatch(/not allowed/);
    } finally {
      fake.setMode({ kind: "normal" });
    }
  });

  it("leaves punctual's own trigger alone: a /v1 trigger takes no occurrence", async () => {
    const task = await created(once());
    const answer = await call(t.url, "POST", `/v1/tasks/${task.id}/trigger`, { token: alice });
    expect(answer.status).toBe(202);
    await waitFor(
      async () => ((await runsOf(task.id))[0]?.status === "success" ? true : undefined),
      { timeoutMs: 10_000, what: "the /v1 manual run to succeed" },
    );
    const after = (await api("GET", `/scheduled-tasks/${task.id}`, alice)).body;
    expect(after).toMatchObject({ status: "enabled", next_run_at: task.next_run_at });
  });
});

describe("TestDelete", () => {
  it("deletes, and answers 404 for an unknown task and someone else's", async () => {
    const task = await created();
    const theirs = await created(cron(), bob);
    expect((await api("DELETE", `/scheduled-tasks/${task.id}`, alice)).body).toEqual({
      id: task.id,
      deleted: true,
    });
    expect((await api("GET", `/scheduled-tasks/${task.id}`, alice)).status).toBe(404);
    expect((await api("DELETE", "/scheduled-tasks/nope", alice)).status).toBe(404);
    expect((await api("DELETE", `/scheduled-tasks/${theirs.id}`, alice)).status).toBe(404);
  });
});

describe("TestRunHistory", () => {
  it("lists an owned task's runs with DeerFlow's fields, and 404 for unknown or other users'", async () => {
    const task = await created();
    await api("POST", `/scheduled-tasks/${task.id}/trigger`, alice);
    await waitFor(async () => ((await runsOf(task.id)).length === 1 ? true : undefined), {
      timeoutMs: 10_000,
      what: "one run",
    });
    const [run] = await runsOf(task.id);
    expect(Object.keys(run).sort()).toEqual(
      [
        "id",
        "task_id",
        "thread_id",
        "run_id",
        "scheduled_for",
        "trigger",
        "status",
        "error",
        "started_at",
        "finished_at",
        "created_at",
        "attempt_count",
      ].sort(),
    );
    expect((await api("GET", "/scheduled-tasks/nope/runs", alice)).status).toBe(404);
    expect((await api("GET", `/scheduled-tasks/${task.id}/runs`, bob)).status).toBe(404);
    const paged = await api("GET", `/scheduled-tasks/${task.id}/runs?limit=1&offset=1`, alice);
    expect(paged.body).toEqual([]);
    expect((await api("GET", `/scheduled-tasks/${task.id}/runs?limit=201`, alice)).status).toBe(
      422,
    );
  });

  it("reads runs without side effects", async () => {
    const task = await created();
    await runsOf(task.id);
    await runsOf(task.id);
    expect((await api("GET", `/scheduled-tasks/${task.id}`, alice)).body).toEqual(task);
  });
});

describe("TestErrorMapping and the routes", () => {
  it("answers every error as {detail}, keeping the message", async () => {
    const answer = await api("POST", "/scheduled-tasks", alice, cron({ timezone: "Nowhere/X" }));
    expect(answer.body).toEqual({ detail: expect.stringContaining("Nowhere/X") });
    const unknown = await call(t.url, "GET", "/api/scheduled-tasks/x/y/z", { token: alice });
    expect(unknown).toMatchObject({ status: 404, body: { detail: "Not Found" } });
    const broken = await call(t.url, "POST", "/api/scheduled-tasks", {
      token: alice,
      raw: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(broken.status).toBe(422);
  });

  it("registers DeerFlow's routes", () => {
    const routes = t.server.app.punctualRoutes.map((r) => `${r.method} ${r.url}`);
    for (const route of [
      "GET /api/scheduled-tasks",
      "POST /api/scheduled-tasks",
      "GET /api/scheduled-tasks/:id",
      "PATCH /api/scheduled-tasks/:id",
      "DELETE /api/scheduled-tasks/:id",
      "POST /api/scheduled-tasks/:id/pause",
      "POST /api/scheduled-tasks/:id/resume",
      "POST /api/scheduled-tasks/:id/trigger",
      "GET /api/scheduled-tasks/:id/runs",
      "GET /api/threads/:thread_id/scheduled-tasks",
    ]) {
      expect(routes).toContain(route);
    }
  });
});

describe("punctual's several rules and days to skip (deviation: DeerFlow's schedule_spec holds one cron)", () => {
  /** A task made through /v1 on the DeerFlow server, as the DeerFlow API lists it. */
  async function richTask(schedule: Record<string, unknown>) {
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: {
        title: "rich",
        schedule,
        target: {
          kind: "agent",
          server: "deer",
          assistant_id: "lead_agent",
          input: { messages: [{ role: "user", content: "hi" }] },
        },
      },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const id = answer.body.task.id as string;
    return (await api("GET", `/scheduled-tasks/${id}`, alice)).body;
  }
  const v1 = async (id: string) =>
    (await call(t.url, "GET", `/v1/tasks/${id}`, { token: alice })).body;

  it("shows several expressions joined by ' | ' with their list, and the days to skip", async () => {
    const task = await richTask({
      type: "cron",
      cron: ["0 9 * * 1-5", "0 10 * * 6"],
      timezone: "Europe/Berlin",
      exclude: ["2030-12-25", { days: "1 1 *" }],
    });
    expect(task).toMatchObject({
      schedule_type: "cron",
      timezone: "Europe/Berlin",
      schedule_spec: {
        cron: "0 9 * * 1-5 | 0 10 * * 6",
        rules: ["0 9 * * 1-5", "0 10 * * 6"],
        exclude: ["2030-12-25", { days: "1 1 *" }],
      },
    });
    expect(Object.keys(task).sort()).toEqual(TASK_FIELDS);
    const listed = (await api("GET", "/scheduled-tasks", alice)).body as { id: string }[];
    expect(listed.map((item) => item.id)).toContain(task.id);
  });

  it("keeps the rules and the days to skip when only the zone or the title changes", async () => {
    const task = await richTask({
      type: "cron",
      cron: ["0 9 * * 1-5", "0 10 * * 6"],
      timezone: "Europe/Berlin",
      exclude: ["2030-12-25"],
      end_at: "2040-01-01T00:00:00Z",
    });
    await api("PATCH", `/scheduled-tasks/${task.id}`, alice, { title: "renamed" });
    const zone = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      timezone: "America/New_York",
    });
    expect(zone.body).toMatchObject({
      title: "renamed",
      timezone: "America/New_York",
      schedule_spec: task.schedule_spec,
    });
    expect((await v1(task.id)).schedule).toEqual({
      type: "cron",
      cron: ["0 9 * * 1-5", "0 10 * * 6"],
      timezone: "America/New_York",
      exclude: ["2030-12-25"],
      end_at: "2040-01-01T00:00:00Z",
    });
  });

  it("takes ' | ' and exclude in schedule_spec; a new cron keeps the days to skip", async () => {
    const task = await created(
      cron({ schedule_spec: { cron: "0 9 * * 1-5 |  0 10 * * 6", exclude: ["2030-12-25"] } }),
    );
    expect(task.schedule_spec).toEqual({
      cron: "0 9 * * 1-5 | 0 10 * * 6",
      rules: ["0 9 * * 1-5", "0 10 * * 6"],
      exclude: ["2030-12-25"],
    });
    const one = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      schedule_spec: { cron: "30 7 * * *" },
    });
    expect(one.body.schedule_spec).toEqual({ cron: "30 7 * * *", exclude: ["2030-12-25"] });
    const cleared = await api("PATCH", `/scheduled-tasks/${task.id}`, alice, {
      schedule_spec: { cron: "30 7 * * *", exclude: [] },
    });
    expect(cleared.body.schedule_spec).toEqual({ cron: "30 7 * * *" });
  });

  it.each([
    [{ cron: "0 9 * * * | 0 0 9 * * *" }, "Cron expression must contain exactly 5 fields"],
    [{ cron: "0 9 * * * |" }, "Cron expression must contain exactly 5 fields"],
    [{ cron: "0 9 * * *", exclude: ["2030-02-30"] }, "schedule_spec.exclude.0: "],
  ])("refuses %j with 422", async (spec, detail) => {
    const answer = await api("POST", "/scheduled-tasks", alice, cron({ schedule_spec: spec }));
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toContain(detail);
  });
});
