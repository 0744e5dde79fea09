/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * The HTTP API against a real server on port 0: the router scenarios of the reference (section 6.5)
 * ported to our routes, HTTP semantics (ETag, If-Match, Idempotency-Key, pages, limits), owner isolation
 * and auth on every route (problem-types.test.ts reaches every documented problem type on its own).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../../../src/adapters/http/http-app.js";
import {
  explanationViewSchema as explanationSchema,
  runViewSchema as runSchema,
  taskViewSchema as taskSchema,
} from "../../../src/application/shapes/view-schemas.js";
import type { Instant } from "../../../src/domain/time.js";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";
import { closedPort } from "../../helpers/webhook-receiver.js";

let t: TestServer;
let alice: string;
let bob: string;
let admin: string;

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob, admin] = await Promise.all([
    t.token("alice"),
    t.token("bob"),
    t.token("root", true),
  ]);
});
afterAll(async () => {
  await t.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(t.url, method, path, options);

async function createTask(token: string, body: unknown = CRON_TASK) {
  const answer = await api("POST", "/v1/tasks", { token, body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.task as { id: string; version: number };
}

function expectProblem(answer: { status: number; body: any }, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.type).toBe(`https://punctual.dev/problems/${code}`);
  expect(answer.body.status).toBe(status);
  expect(typeof answer.body.detail).toBe("string");
}

describe("create", () => {
  it("creates a cron task and renders it with server-owned fields and UTC timestamps", async () => {
    const answer = await api("POST", "/v1/tasks", { token: alice, body: CRON_TASK });
    expect(answer.status).toBe(201);
    const task = taskSchema.parse(answer.body.task);
    expect(task.owner).toBe("alice");
    expect(task.status).toBe("enabled");
    expect(task.next_run_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(answer.headers.get("etag")).toBe(`"${task.version}"`);
    expect(answer.headers.get("location")).toBe(`/v1/tasks/${task.id}`);
    expect(answer.body.warnings).toEqual([]);
  });

  it("takes the owner from the token, never from the body", async () => {
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, owner: "bob", id: "x", version: 9 },
    });
    expectProblem(answer, 422, "validation_failed");
    const fields = (answer.body.errors as { field: string }[]).map((e) => e.field);
    expect(fields.join(" ")).toMatch(/owner|body/);
  });

  it.each([
    ["an unknown schedule type", { type: "weekly" }],
    ["cron without its expression", { type: "cron" }],
    ["a malformed cron", { type: "cron", cron: "61 * * * *" }],
    ["an unknown time zone", { type: "cron", cron: "* * * * *", timezone: "Mars/Olympus" }],
    ["a once task in the past", { type: "once", run_at: "2001-01-01T00:00:00Z" }],
  ])("refuses %s with 422 naming the field", async (_name, schedule) => {
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, schedule },
    });
    expectProblem(answer, 422, "validation_failed");
    expect(answer.body.errors[0].field).toMatch(/^schedule/);
  });

  it("refuses reuse_thread without a thread and an unknown context mode", async () => {
    const noThread = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, context: { mode: "reuse_thread" } },
    });
    expectProblem(noThread, 422, "validation_failed");
    const badMode = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, context: { mode: "sometimes" } },
    });
    expectProblem(badMode, 422, "validation_failed");
  });

  it("refuses a once task less than 1 second ahead, the server's min_once_delay (docs/schedules.md#once)", async () => {
    // run_at on the next whole second: between 0.2 and 0.9 s ahead when the server reads its clock.
    while (Date.now() % 1000 < 100 || Date.now() % 1000 > 800) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const runAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000).toISOString();
    const body = { ...CRON_TASK, schedule: { type: "once", run_at: runAt } };
    const answer = await api("POST", "/v1/tasks", { token: alice, body });
    expectProblem(answer, 422, "validation_failed");
    expect(answer.body.errors).toEqual([
      { field: "schedule.run_at", message: "must be at least 1 second in the future" },
    ]);
    const later = new Date(Math.floor(Date.now() / 1000) * 1000 + 3000).toISOString();
    await createTask(alice, { ...body, schedule: { type: "once", run_at: later } });
  });

  it("refuses a webhook url or cancel_url that is not an http(s) URL, before writing anything", async () => {
    const before = (await api("GET", "/v1/tasks?limit=200", { token: alice })).body.items.length;
    const webhook = (fields: Record<string, unknown>) => ({
      ...CRON_TASK,
      target: { kind: "webhook", url: "https://hooks.example.com/run", ...fields },
    });
    for (const [fields, field] of [
      [{ url: "not a url" }, "target.url"],
      [{ url: "file:///etc/passwd" }, "target.url"],
      [{ url: "ftp://hooks.example.com/run" }, "target.url"],
      [{ url: "/relative/path" }, "target.url"],
      [{ cancel_url: "javascript:alert(1)" }, "target.cancel_url"],
    ] as const) {
      const answer = await api("POST", "/v1/tasks", { token: alice, body: webhook(fields) });
      expectProblem(answer, 422, "validation_failed");
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect((await api("GET", "/v1/tasks?limit=200", { token: alice })).body.items).toHaveLength(
      before,
    );
    await createTask(alice, webhook({ cancel_url: "https://hooks.example.com/cancel" }));
  });

  it("refuses webhook headers that HTTP cannot carry (a bad name, a line break in a value)", async () => {
    const webhook = (headers: Record<string, string>) => ({
      ...CRON_TASK,
      target: { kind: "webhook", url: "https://hooks.example.com/run", headers },
    });
    for (const headers of [
      { "bad header": "x" },
      { "X-Name:": "x" },
      { "X-Injected": "a\r\nSet-Cookie: b=c" },
      { "X-Nul": "a\u0000b" },
    ]) {
      const answer = await api("POST", "/v1/tasks", { token: alice, body: webhook(headers) });
      expectProblem(answer, 422, "validation_failed");
      expect(answer.body.errors[0].field).toMatch(/^target\.headers/);
    }
    await createTask(alice, webhook({ "X-Api-Key": "s3cr3t value, with; punctuation\t" }));
  });

  it("refuses an unknown handler before writing anything", async () => {
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, target: { kind: "handler", name: "nope" } },
    });
    expectProblem(answer, 422, "validation_failed");
  });

  it("answers 401 to an anonymous or unknown caller", async () => {
    expectProblem(await api("POST", "/v1/tasks", { body: CRON_TASK }), 401, "unauthorized");
    const bad = await api("GET", "/v1/tasks", { token: "pct_not-a-token" });
    expectProblem(bad, 401, "unauthorized");
    expect(bad.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("refuses a target input over 256 KiB with 422 naming the limit, writing nothing", async () => {
    const before = (await api("GET", "/v1/tasks?limit=200", { token: alice })).body.items.length;
    const input = { blob: "x".repeat(300 * 1024) };
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, target: { kind: "handler", name: "log", input } },
    });
    expectProblem(answer, 422, "limit_exceeded");
    expect(answer.body.limit).toBe("target_input");
    const after = (await api("GET", "/v1/tasks?limit=200", { token: alice })).body.items.length;
    expect(after).toBe(before);
  });

  it("refuses a body over 1 MiB with 413 naming the limit", async () => {
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      raw: JSON.stringify({ ...CRON_TASK, description: "x".repeat(1100 * 1024) }),
      headers: { "content-type": "application/json" },
    });
    expectProblem(answer, 413, "limit_exceeded");
    expect(answer.body).toMatchObject({ limit: "request_body", max: 1048576 });
  });

  it("answers 400 to malformed JSON and 415 to a non-JSON media type", async () => {
    const headers = { "content-type": "application/json" };
    expectProblem(
      await api("POST", "/v1/tasks", { token: alice, raw: "{", headers }),
      400,
      "malformed_request",
    );
    expectProblem(
      await api("POST", "/v1/tasks", {
        token: alice,
        raw: "title=x",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
      415,
      "unsupported_media_type",
    );
  });
});

describe("Idempotency-Key", () => {
  it("returns the first answer to a repeated create, and refuses the key with another body", async () => {
    const headers = { "idempotency-key": "create-1" };
    const first = await api("POST", "/v1/tasks", { token: alice, body: CRON_TASK, headers });
    const again = await api("POST", "/v1/tasks", { token: alice, body: CRON_TASK, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.task.id).toBe(first.body.task.id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, title: "different" },
      headers,
    });
    expectProblem(other, 422, "idempotency_key_reused");
    // The same key is another owner's own key.
    const bobs = await api("POST", "/v1/tasks", { token: bob, body: CRON_TASK, headers });
    expect(bobs.body.task.id).not.toBe(first.body.task.id);
  });

  it("answers 409 while the first request with a key is in progress, and refuses bad keys", async () => {
    const store = t.server.runtime.store;
    await store.idempotency!.reserve(
      { owner: "alice" as never, route: "POST /v1/tasks", key: "in-flight" },
      "hash",
      Date.now() as Instant,
    );
    const answer = await api("POST", "/v1/tasks", {
      token: alice,
      body: CRON_TASK,
      headers: { "idempotency-key": "in-flight" },
    });
    expectProblem(answer, 409, "idempotency_in_progress");
    const bad = await api("POST", "/v1/tasks", {
      token: alice,
      body: CRON_TASK,
      headers: { "idempotency-key": "x".repeat(201) },
    });
    expectProblem(bad, 422, "validation_failed");
  });

  it("queues one run for two triggers with one key (202 with the run)", async () => {
    const task = await createTask(alice, { ...CRON_TASK, options: { overlap: "allow_all" } });
    const headers = { "idempotency-key": "trigger-1" };
    const first = await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice, headers });
    const again = await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice, headers });
    expect(first.status).toBe(202);
    runSchema.parse(first.body);
    expect(first.body).toMatchObject({ trigger: "manual", status: "queued", task_id: task.id });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    const runs = await api("GET", `/v1/tasks/${task.id}/runs?trigger=manual`, { token: alice });
    expect(runs.body.items).toHaveLength(1);
  });
});

describe("read and list", () => {
  it("reads a task by id with its ETag; unknown and other owners' tasks are 404", async () => {
    const task = await createTask(alice);
    const read = await api("GET", `/v1/tasks/${task.id}`, { token: alice });
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe('"1"');
    expectProblem(await api("GET", "/v1/tasks/nope", { token: alice }), 404, "not_found");
    expectProblem(await api("GET", `/v1/tasks/${task.id}`, { token: bob }), 404, "not_found");
    expect((await api("GET", `/v1/tasks/${task.id}`, { token: admin })).status).toBe(200);
  });

  it("pages through the owner's tasks with a stable order and a cursor", async () => {
    const owner = await t.token("pager");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await createTask(owner, { ...CRON_TASK, title: `t${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(
        "GET",
        `/v1/tasks?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        { token: owner },
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((task: { id: string }) => task.id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect([...seen].sort()).toEqual([...ids].sort());
    expect(new Set(seen).size).toBe(5);
  });

  it("refuses page sizes over 200 naming the limit, and bad query strings with 422", async () => {
    const big = await api("GET", "/v1/tasks?limit=201", { token: alice });
    expectProblem(big, 422, "limit_exceeded");
    expect(big.body).toMatchObject({ limit: "page_size", max: 200 });
    expectProblem(
      await api("GET", "/v1/tasks?status=bogus", { token: alice }),
      422,
      "validation_failed",
    );
    expectProblem(
      await api("GET", "/v1/tasks?cursor=@@@", { token: alice }),
      422,
      "validation_failed",
    );
    const unknown = await api("GET", "/v1/tasks?unknown=1", { token: alice });
    expectProblem(unknown, 422, "validation_failed");
    expect(unknown.body.errors).toEqual([
      { field: "query", message: expect.stringContaining('"unknown"') },
    ]);
  });

  it("lists a thread's tasks for their owner only (an empty list otherwise)", async () => {
    const bound = await createTask(alice, {
      ...CRON_TASK,
      context: { mode: "reuse_thread", thread_id: "thread-a" },
    });
    const mine = await api("GET", "/v1/threads/thread-a/tasks", { token: alice });
    expect(mine.body.items.map((task: { id: string }) => task.id)).toEqual([bound.id]);
    const theirs = await api("GET", "/v1/threads/thread-a/tasks", { token: bob });
    expect(theirs.body).toEqual({ items: [], next_cursor: null });
    const filtered = await api("GET", "/v1/tasks?thread_id=thread-a", { token: alice });
    expect(filtered.body.items).toHaveLength(1);
  });

  it("lists the tasks of a thread whose id has the longest allowed length (128 characters)", async () => {
    const threadId = "t".repeat(128);
    const bound = await createTask(alice, {
      ...CRON_TASK,
      context: { mode: "reuse_thread", thread_id: threadId },
    });
    const mine = await api("GET", `/v1/threads/${threadId}/tasks`, { token: alice });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body.items.map((task: { id: string }) => task.id)).toEqual([bound.id]);
  });

  it("answers a problem to a path with bad percent-encoding (400) or an id far too long (404)", async () => {
    const badEncoding = await api("GET", "/v1/runs/%ZZ", { token: alice });
    expectProblem(badEncoding, 400, "malformed_request");
    expect(badEncoding.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const tooLong = await api("GET", `/v1/tasks/${"a".repeat(5000)}`, { token: alice });
    expectProblem(tooLong, 404, "not_found");
    expect(tooLong.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});

describe("update", () => {
  it("edits the title in place with If-Match and bumps the ETag", async () => {
    const task = await createTask(alice);
    const answer = await api("PATCH", `/v1/tasks/${task.id}`, {
      token: alice,
      body: { title: "renamed" },
      headers: { "if-match": '"1"' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.task).toMatchObject({ title: "renamed", version: 2 });
    expect(answer.headers.get("etag")).toBe('"2"');
  });

  it("requires If-Match (428), refuses a stale one (409) and a malformed one (400)", async () => {
    const task = await createTask(alice);
    const path = `/v1/tasks/${task.id}`;
    expectProblem(
      await api("PATCH", path, { token: alice, body: { title: "x" } }),
      428,
      "precondition_required",
    );
    expectProblem(
      await api("PATCH", path, {
        token: alice,
        body: { title: "x" },
        headers: { "if-match": '"7"' },
      }),
      409,
      "version_conflict",
    );
    expectProblem(
      await api("PATCH", path, {
        token: alice,
        body: { title: "x" },
        headers: { "if-match": "soon" },
      }),
      400,
      "malformed_request",
    );
  });

  it("answers 409, not 400, to a well-formed entity tag that is not the task's version", async () => {
    const task = await createTask(alice);
    const path = `/v1/tasks/${task.id}`;
    // RFC 9110: an entity tag is any quoted string (weak or strong); one this server never issued
    // cannot match, which is a stale precondition, not a malformed request.
    for (const tag of ['"1234567890"', '"99999999999999999999"', '"abc"', 'W/"x-1"', '""']) {
      expectProblem(
        await api("PATCH", path, {
          token: alice,
          body: { title: "x" },
          headers: { "if-match": tag },
        }),
        409,
        "version_conflict",
      );
      expectProblem(
        await api("DELETE", path, { token: alice, headers: { "if-match": tag } }),
        409,
        "version_conflict",
      );
    }
    // Still malformed: no quotes around a non-number, an unterminated tag, a bare W/.
    for (const tag of ["abc", '"1', "W/", 'W/"1" x']) {
      expectProblem(
        await api("PATCH", path, {
          token: alice,
          body: { title: "x" },
          headers: { "if-match": tag },
        }),
        400,
        "malformed_request",
      );
    }
    // The task was never touched.
    const read = await api("GET", path, { token: alice });
    expect(read.body.version).toBe(task.version);
    expect(read.headers.get("etag")).toBe(`"${task.version}"`);
  });

  it("refuses a malformed schedule with 422 and another owner's task with 404", async () => {
    const task = await createTask(alice);
    const headers = { "if-match": '"1"' };
    const bad = await api("PATCH", `/v1/tasks/${task.id}`, {
      token: alice,
      body: { schedule: { type: "cron", cron: "nope" } },
      headers,
    });
    expectProblem(bad, 422, "validation_failed");
    const foreign = await api("PATCH", `/v1/tasks/${task.id}`, {
      token: bob,
      body: { title: "mine" },
      headers,
    });
    expectProblem(foreign, 404, "not_found");
  });
});

describe("pause, resume, cancel, trigger, backfill, preview, explain", () => {
  it("pauses then resumes a task, and a paused task can still be triggered (it stays paused)", async () => {
    const task = await createTask(alice);
    const paused = await api("POST", `/v1/tasks/${task.id}/pause`, { token: alice });
    expect(paused.body.status).toBe("paused");
    const run = await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice });
    expect(run.status).toBe(202);
    expect((await api("GET", `/v1/tasks/${task.id}`, { token: alice })).body.status).toBe("paused");
    const resumed = await api("POST", `/v1/tasks/${task.id}/resume`, {
      token: alice,
      body: { catch_up: "none" },
    });
    expect(resumed.body.status).toBe("enabled");
    expectProblem(await api("POST", "/v1/tasks/nope/pause", { token: alice }), 404, "not_found");
  });

  it("refuses a body field that trigger, cancel and run cancel do not take, changing nothing", async () => {
    const task = await createTask(alice);
    const junk = { body: { now: true } };
    expectProblem(
      await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice, ...junk }),
      422,
      "validation_failed",
    );
    expect((await api("GET", `/v1/tasks/${task.id}/runs`, { token: alice })).body.items).toEqual(
      [],
    );
    const run = await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice, body: {} });
    expect(run.status).toBe(202);
    expectProblem(
      await api("POST", `/v1/runs/${run.body.id}/cancel`, { token: alice, ...junk }),
      422,
      "validation_failed",
    );
    expect((await api("GET", `/v1/runs/${run.body.id}`, { token: alice })).body.status).toBe(
      "queued",
    );
    expectProblem(
      await api("POST", `/v1/tasks/${task.id}/cancel`, { token: alice, ...junk }),
      422,
      "validation_failed",
    );
    expect((await api("GET", `/v1/tasks/${task.id}`, { token: alice })).body.status).toBe(
      "enabled",
    );
  });

  it("refuses a trigger under overlap skip while a run is active (409)", async () => {
    const task = await createTask(alice);
    expect((await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice })).status).toBe(202);
    expectProblem(
      await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice }),
      409,
      "run_active",
    );
  });

  it("cancels a task, then refuses to pause it (409 illegal_transition)", async () => {
    const task = await createTask(alice);
    const cancelled = await api("POST", `/v1/tasks/${task.id}/cancel`, { token: alice });
    expect(cancelled.body.status).toBe("cancelled");
    expectProblem(
      await api("POST", `/v1/tasks/${task.id}/pause`, { token: alice }),
      409,
      "illegal_transition",
    );
  });

  it("backfills nominal times (202) and refuses more than 1,000 naming the limit", async () => {
    const task = await createTask(alice);
    const now = Date.now();
    const from = new Date(now - 10 * 60_000).toISOString();
    const to = new Date(now - 5 * 60_000).toISOString();
    const answer = await api("POST", `/v1/tasks/${task.id}/backfill`, {
      token: alice,
      body: { from, to },
    });
    expect(answer.status).toBe(202);
    expect(answer.body.runs.length).toBeGreaterThanOrEqual(4);
    const again = await api("POST", `/v1/tasks/${task.id}/backfill`, {
      token: alice,
      body: { from, to },
    });
    expect(again.body.runs).toHaveLength(0);
    const huge = await api("POST", `/v1/tasks/${task.id}/backfill`, {
      token: alice,
      body: { from: new Date(now - 3 * 86_400_000).toISOString(), to },
    });
    expectProblem(huge, 422, "limit_exceeded");
    expect(huge.body.limit).toBe("backfill");
  });

  it("shows a run from a moved occurrence with moved_from, and no other run", async () => {
    const task = await createTask(alice, {
      ...CRON_TASK,
      schedule: {
        type: "cron",
        cron: "0 9 25 * *",
        timezone: "UTC",
        exclude: ["2025-12-25"],
        on_excluded: "previous",
      },
    });
    const answer = await api("POST", `/v1/tasks/${task.id}/backfill`, {
      token: alice,
      body: { from: "2025-12-01T00:00:00Z", to: "2026-02-01T00:00:00Z" },
    });
    expect(answer.status).toBe(202);
    const brief = (run: any): unknown[] => [run.scheduled_for, run.fire_at, run.moved_from];
    expect(answer.body.runs.map(brief)).toEqual([
      ["2025-12-25T09:00:00Z", "2025-12-24T09:00:00Z", "2025-12-25T09:00:00Z"],
      ["2026-01-25T09:00:00Z", "2026-01-25T09:00:00Z", null],
    ]);
    const [moved, ordinary] = answer.body.runs;
    expect((await api("GET", `/v1/runs/${moved.id}`, { token: alice })).body).toEqual(moved);
    expect((await api("GET", `/v1/runs/${ordinary.id}`, { token: alice })).body).toEqual(ordinary);
    const listed = await api("GET", `/v1/tasks/${task.id}/runs`, { token: alice });
    expect(listed.body.items.map(brief)).toEqual(answer.body.runs.map(brief).reverse());
  });

  it("previews the next fires with wall times, and refuses a count over 100", async () => {
    const task = await createTask(alice, {
      ...CRON_TASK,
      schedule: { type: "cron", cron: "30 2 * * *", timezone: "America/New_York" },
    });
    const answer = await api("GET", `/v1/tasks/${task.id}/preview?count=3`, { token: alice });
    expect(answer.status).toBe(200);
    expect(answer.body.occurrences).toHaveLength(3);
    expect(answer.body.occurrences[0]).toMatchObject({ wall: expect.stringMatching(/T02:30:00$/) });
    expectProblem(
      await api("GET", `/v1/tasks/${task.id}/preview?count=101`, { token: alice }),
      422,
      "validation_failed",
    );
  });

  it("previews no fires for a task that has ended, and the schedule's fires while paused", async () => {
    const paused = await createTask(alice);
    await api("POST", `/v1/tasks/${paused.id}/pause`, { token: alice });
    const whilePaused = await api("GET", `/v1/tasks/${paused.id}/preview?count=2`, {
      token: alice,
    });
    expect(whilePaused.body.occurrences).toHaveLength(2);
    const ended = await createTask(alice);
    expect((await api("POST", `/v1/tasks/${ended.id}/cancel`, { token: alice })).status).toBe(200);
    const answer = await api("GET", `/v1/tasks/${ended.id}/preview?count=3`, { token: alice });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ occurrences: [] });
  });

  it("explains an instant (200, the documented shape) and refuses a bad instant (422)", async () => {
    const task = await createTask(alice);
    const answer = await api("GET", `/v1/tasks/${task.id}/explain?at=2026-01-01T00:00:00Z`, {
      token: alice,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const explanation = explanationSchema.parse(answer.body);
    expect(explanation).toMatchObject({
      at: "2026-01-01T00:00:00Z",
      task_status: "enabled",
      verdict: "before_start",
      run: null,
    });
    expect(explanation.message.length).toBeGreaterThan(0);
    expectProblem(
      await api("GET", `/v1/tasks/${task.id}/explain?at=yesterday`, { token: alice }),
      422,
      "validation_failed",
    );
    expectProblem(
      await api("GET", `/v1/tasks/${task.id}/explain`, { token: alice }),
      422,
      "validation_failed",
    );
  });

  it("explains a manual run around now as queued, with the run", async () => {
    const task = await createTask(alice);
    const run = (await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice })).body;
    const answer = await api(
      "GET",
      `/v1/tasks/${task.id}/explain?at=${encodeURIComponent(run.scheduled_for)}`,
      { token: alice },
    );
    expect(answer.status).toBe(200);
    expect(explanationSchema.parse(answer.body).run?.id).toBe(run.id);
  });
});

describe("runs and delete", () => {
  it("reads and cancels a run; another owner's run is 404", async () => {
    const task = await createTask(alice);
    const run = (await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice })).body;
    expect((await api("GET", `/v1/runs/${run.id}`, { token: alice })).body.id).toBe(run.id);
    expectProblem(await api("GET", `/v1/runs/${run.id}`, { token: bob }), 404, "not_found");
    const cancelled = await api("POST", `/v1/runs/${run.id}/cancel`, { token: alice });
    expect(cancelled.body.status).toBe("cancelled");
    const history = await api("GET", `/v1/tasks/${task.id}/runs`, { token: alice });
    expect(history.body.items.map((r: { id: string }) => r.id)).toContain(run.id);
    expectProblem(await api("GET", `/v1/tasks/${task.id}/runs`, { token: bob }), 404, "not_found");
  });

  it("refuses to cancel a run that has ended (409 illegal_transition), changing nothing", async () => {
    const task = await createTask(alice);
    const run = (await api("POST", `/v1/tasks/${task.id}/trigger`, { token: alice })).body;
    const first = await api("POST", `/v1/runs/${run.id}/cancel`, { token: alice });
    expect(first.body.status).toBe("cancelled");
    const again = await api("POST", `/v1/runs/${run.id}/cancel`, { token: alice });
    expectProblem(again, 409, "illegal_transition");
    expect((await api("GET", `/v1/runs/${run.id}`, { token: alice })).body).toEqual(first.body);
  });

  it("deletes a task (204), honours a stale If-Match (409), and forgets it (404)", async () => {
    const task = await createTask(alice);
    expectProblem(await api("DELETE", `/v1/tasks/${task.id}`, { token: bob }), 404, "not_found");
    expectProblem(
      await api("DELETE", `/v1/tasks/${task.id}`, { token: alice, headers: { "if-match": '"5"' } }),
      409,
      "version_conflict",
    );
    const deleted = await api("DELETE", `/v1/tasks/${task.id}`, {
      token: alice,
      headers: { "if-match": '"1"' },
    });
    expect(deleted.status).toBe(204);
    expectProblem(await api("GET", `/v1/tasks/${task.id}`, { token: alice }), 404, "not_found");
  });
});

describe("methods", () => {
  it("answers 405 with Allow to a method a route does not take, and 404 to an unknown path", async () => {
    const task = await createTask(alice);
    for (const [method, path, allow] of [
      ["PUT", `/v1/tasks/${task.id}`, "GET, HEAD, PATCH, DELETE"],
      ["DELETE", "/v1/tasks", "GET, HEAD, POST"],
      ["GET", `/v1/tasks/${task.id}/trigger`, "POST"],
      ["POST", "/healthz", "GET, HEAD"],
    ] as const) {
      const answer = await api(method, path, { token: alice });
      expectProblem(answer, 405, "method_not_allowed");
      expect(answer.headers.get("allow")).toBe(allow);
    }
    expectProblem(await api("PUT", "/v1/nothing", { token: alice }), 404, "route_not_found");
  });
});

describe("system routes", () => {
  it("serves health, readiness, metrics, the document and the docs page without a token", async () => {
    expect((await api("GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await api("GET", "/readyz")).body).toEqual({ status: "ready" });
    const metrics = await api("GET", "/metrics");
    expect(metrics.body).toContain("punctual_decisions_total");
    expect(metrics.body).toContain("punctual_http_requests_total");
    expect((await api("GET", "/docs")).headers.get("content-type")).toContain("text/html");
    expect((await api("GET", "/openapi.json")).body.openapi).toBe("3.1.0");
    expectProblem(await api("GET", "/v2/nothing"), 404, "route_not_found");
  });

  it("answers readiness 503 while shutting down", async () => {
    const app = await buildHttpApp({
      tasks: t.server.runtime.tasks,
      tokens: t.server.tokens,
      idempotency: t.server.runtime.store.idempotency!,
      health: t.server.runtime.store,
      now: () => Date.now() as Instant,
      isShuttingDown: () => true,
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    try {
      expectProblem(await call(url, "GET", "/readyz"), 503, "not_ready");
    } finally {
      await app.close();
    }
  });

  it("rate-limits per token with 429 and Retry-After", async () => {
    const limited = await startTestServer({ rateLimit: { burst: 2, perSecond: 0.5 } });
    try {
      const token = await limited.token("eve");
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof call>> | null = null;
      for (let i = 0; i < 3; i++) {
        last = await call(limited.url, "GET", "/v1/tasks", { token });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expectProblem(last!, 429, "rate_limited");
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // Another token has its own bucket.
      expect(
        (await call(limited.url, "GET", "/v1/tasks", { token: await limited.token("x") })).status,
      ).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});

describe("a rate quota", () => {
  it("answers 429 quota_exceeded naming it, with Retry-After (docs/security.md#quotas)", async () => {
    const quota = await startTestServer({ policy: { quotas: { runsPerMinute: 1 } } });
    try {
      const token = await quota.token("eve");
      const created = await call(quota.url, "POST", "/v1/tasks", {
        token,
        body: {
          title: "triggered",
          schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
          target: { kind: "handler", name: "log" },
          options: { overlap: "allow_all" },
        },
      });
      const path = `/v1/tasks/${created.body.task.id}/trigger`;
      expect((await call(quota.url, "POST", path, { token })).status).toBe(202);
      const over = await call(quota.url, "POST", path, { token });
      expectProblem(over, 429, "quota_exceeded");
      expect(over.body).toMatchObject({ limit: "runs_per_minute", max: 1 });
      expect(over.headers.get("retry-after")).toBe("60");
    } finally {
      await quota.stop();
    }
  });
});

describe("an agent server that cannot be asked", () => {
  it("answers 503 target_unavailable for a reuse_thread task, and writes nothing", async () => {
    const port = await closedPort();
    const agentful = await startTestServer({
      agentServers: [
        {
          name: "down",
          url: `http://127.0.0.1:${port}`,
          headers: {},
          flavor: "langgraph",
          webhooks: false,
          requestTimeoutMs: 2000,
          pollIntervalMs: 5000,
          knobs: { config: {}, context: {} },
          assistantId: null,
        },
      ],
    });
    try {
      const token = await agentful.token("alice");
      const answer = await call(agentful.url, "POST", "/v1/tasks", {
        token,
        body: {
          title: "on a thread",
          schedule: { type: "cron", cron: "0 9 * * *" },
          target: { kind: "agent", server: "down", assistant_id: "agent", input: null },
          context: { mode: "reuse_thread", thread_id: "6f1c2b7e-0d4a-4c53-9a51-1f0e3c1b2a77" },
        },
      });
      expect(answer.status).toBe(503);
      expect(answer.body.type).toBe("https://punctual.dev/problems/target_unavailable");
      expect(answer.body.detail).toContain('agent server "down"');
      const list = await call(agentful.url, "GET", "/v1/tasks", { token });
      expect(list.body.items).toEqual([]);
    } finally {
      await agentful.stop();
    }
  });
});

describe("calendars", () => {
  it("refuses to delete a calendar a task names: 409 calendar_in_use naming the task", async () => {
    const put = await api("PUT", "/v1/calendars/closures", {
      token: alice,
      body: { items: ["2099-12-25"] },
    });
    expect(put.status).toBe(201);
    const task = await createTask(alice, {
      ...CRON_TASK,
      schedule: { ...CRON_TASK.schedule, exclude: [{ calendar: "closures" }] },
    });
    const answer = await api("DELETE", "/v1/calendars/closures", { token: alice });
    expectProblem(answer, 409, "calendar_in_use");
    expect(answer.body.task_id).toBe(task.id);
  });
});

describe("task keys", () => {
  const definition = {
    title: "nightly invoices",
    schedule: { type: "cron", cron: "0 2 * * *", timezone: "Europe/Berlin" },
    target: { kind: "handler", name: "log" },
  };

  it("creates by PUT (201), answers identical input 200 with nothing changed, and replaces", async () => {
    const created = await api("PUT", "/v1/tasks/by-key/billing:nightly", {
      token: alice,
      body: definition,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ created: true, changed: [] });
    const task = taskSchema.parse(created.body.task);
    expect(task.key).toBe("billing:nightly");
    expect(created.headers.get("etag")).toBe('"1"');
    expect(created.headers.get("location")).toBe(`/v1/tasks/${task.id}`);

    const same = await api("PUT", "/v1/tasks/by-key/billing:nightly", {
      token: alice,
      body: definition,
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ created: false, changed: [], task: { version: 1 } });

    const replaced = await api("PUT", "/v1/tasks/by-key/billing:nightly", {
      token: alice,
      headers: { "if-match": '"1"' },
      body: { ...definition, schedule: { type: "cron", cron: "0 3 * * *" } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.changed).toEqual(["schedule"]);
    expect(replaced.body.task).toMatchObject({ id: task.id, version: 2 });
    expect(replaced.body.task.schedule.timezone).toBe("UTC");

    const stale = await api("PUT", "/v1/tasks/by-key/billing:nightly", {
      token: alice,
      headers: { "if-match": '"1"' },
      body: definition,
    });
    expectProblem(stale, 409, "version_conflict");

    const read = await api("GET", "/v1/tasks/by-key/billing:nightly", { token: alice });
    expect(read.body).toMatchObject({ id: task.id, version: 2 });
    const listed = await api("GET", "/v1/tasks?key=billing:nightly", { token: alice });
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([task.id]);
    expectProblem(
      await api("GET", "/v1/tasks/by-key/billing:nightly", { token: bob }),
      404,
      "not_found",
    );
    const bobs = await api("GET", "/v1/tasks?key=billing:nightly", { token: bob });
    expect(bobs.body.items).toEqual([]);
  });

  it("refuses a create with a taken key (409 key_taken) and a body naming another key (422)", async () => {
    const first = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, key: "taken" },
    });
    expect(first.status).toBe(201);
    const again = await api("POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, key: "taken" },
    });
    expectProblem(again, 409, "key_taken");
    const mismatch = await api("PUT", "/v1/tasks/by-key/one", {
      token: alice,
      body: { ...CRON_TASK, key: "two" },
    });
    expectProblem(mismatch, 422, "validation_failed");
    expect(mismatch.body.errors).toEqual([{ field: "key", message: expect.any(String) }]);
    const badKey = await api("PUT", "/v1/tasks/by-key/has%20space", {
      token: alice,
      body: CRON_TASK,
    });
    expectProblem(badKey, 422, "validation_failed");
  });
});
