/**
 * `punctual/client` against a real server on port 0 whose clock stands still: every sub-client call,
 * ETag and `If-Match`, `Idempotency-Key`, cursor pages, problem documents as `PunctualApiError`, an
 * unreachable server, aborted calls, an injected `fetch` and a base URL with a path prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PunctualApiError, PunctualClient, PunctualConnectionError } from "../../src/client.js";
import type { TaskCreateInput } from "../../src/client.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";
import { closedPort } from "../helpers/webhook-receiver.js";

const NOW = Date.parse("2026-03-07T12:00:00Z");

let t: TestServer;
let client: PunctualClient;

beforeAll(async () => {
  t = await startTestServer({ clock: new VirtualClock(NOW) });
  client = new PunctualClient({ baseUrl: t.url, token: await t.token("alice") });
});
afterAll(async () => {
  await t.stop();
});

const DAILY: TaskCreateInput = {
  title: "daily",
  schedule: { type: "cron", cron: "0 9 * * *", timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "log", input: { to: "team" } },
  options: { overlap: "allow_all" },
};

/** The rejection of `promise`, which must be a `PunctualApiError`. */
async function apiError(promise: Promise<unknown>): Promise<PunctualApiError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PunctualApiError);
  return error as PunctualApiError;
}

describe("client.tasks", () => {
  it("creates a batch all or none, in input order, and names a refused item", async () => {
    const inputs = [1, 2, 3].map((n) => ({ ...DAILY, title: `batch ${String(n)}` }));
    const created = await client.tasks.createMany(inputs, { idempotency_key: "client-batch" });
    expect(created.map((c) => c.task.title)).toEqual(["batch 1", "batch 2", "batch 3"]);
    expect(await client.tasks.get(created[1]?.task.id ?? "")).toEqual(created[1]?.task);
    const replay = await client.tasks.createMany(inputs, { idempotency_key: "client-batch" });
    expect(replay).toEqual(created);
    const bad = { ...DAILY, schedule: { type: "cron", cron: "61 * * * *" } } as const;
    const error = await apiError(client.tasks.createMany([DAILY, bad]));
    expect(error.status).toBe(422);
    expect(error.errors.map((e) => e.field)).toEqual(["tasks[1].schedule.cron"]);
  });

  it("creates a task and reads it back with its typed schedule and target", async () => {
    const { task, warnings } = await client.tasks.create(DAILY);
    expect(warnings).toEqual([]);
    const read = await client.tasks.get(task.id);
    expect(read).toEqual(task);
    expect(read.schedule.type === "cron" && read.schedule.timezone).toBe("Europe/Berlin");
    expect(read.target.kind === "handler" && read.target.input).toEqual({ to: "team" });
    expect(read.next_run_at).toBe("2026-03-08T08:00:00Z");
  });

  it("creates once per idempotency key", async () => {
    const first = await client.tasks.create(DAILY, { idempotency_key: "create-1" });
    const again = await client.tasks.create(DAILY, { idempotency_key: "create-1" });
    expect(again.task.id).toBe(first.task.id);
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    const reused = await apiError(
      client.tasks.create({ ...DAILY, title: "other" }, { idempotency_key: "create-1" }),
    );
    expect(reused).toMatchObject({ status: 422, code: "idempotency_key_reused" });
  });

  it("turns a refused input into an error naming each field", async () => {
    const error = await apiError(
      client.tasks.create({
        title: "",
        schedule: { type: "cron", cron: "61 * * * *" },
        target: { kind: "handler", name: "log" },
      }),
    );
    expect(error).toMatchObject({
      name: "PunctualApiError",
      status: 422,
      code: "validation_failed",
      type: "https://punctual.dev/problems/validation_failed",
      title: "The request is invalid",
    });
    expect(error.errors.map((e) => e.field)).toEqual(["title"]);
    expect(error.message).toMatch(/^The request is invalid \(422\): /);
    const cron = await apiError(
      client.tasks.create({ ...DAILY, schedule: { type: "cron", cron: "61 * * * *" } }),
    );
    expect(cron.errors).toEqual([
      { field: "schedule.cron", message: "minute field: 61 is out of range 0-59" },
    ]);
  });

  it("edits with If-Match: a stale version is a version_conflict", async () => {
    const { task } = await client.tasks.create(DAILY);
    const edited = await client.tasks.update(task.id, { title: "v2" }, { version: task.version });
    expect(edited.task).toMatchObject({ title: "v2", version: task.version + 1 });
    const stale = await apiError(
      client.tasks.update(task.id, { title: "v3" }, { version: task.version }),
    );
    expect(stale).toMatchObject({ status: 409, code: "version_conflict" });
    const any = await client.tasks.update(task.id, {
      schedule: { type: "interval", every: "PT1H" },
    });
    // The patched schedule keeps the stored zone it does not name (docs/semantics.md#task-operations).
    expect(any.task.schedule).toEqual({
      type: "interval",
      every: "PT1H",
      timezone: "Europe/Berlin",
    });
  });

  it("lists by pages, and walks every page with an async iterator", async () => {
    const created: string[] = [];
    for (const title of ["p1", "p2", "p3", "p4", "p5"]) {
      created.push(
        (await client.tasks.create({ ...DAILY, title, metadata: { batch: "pages" } })).task.id,
      );
    }
    const first = await client.tasks.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.next_cursor).not.toBeNull();
    const seen: string[] = [];
    let pages = 0;
    for await (const page of client.tasks.pages({ limit: 2 })) {
      pages++;
      seen.push(...page.items.map((task) => task.id));
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(created));
    const limit = await apiError(client.tasks.list({ limit: 500 }));
    expect(limit).toMatchObject({ status: 422, code: "limit_exceeded", max: 200 });
  });

  it("pauses, resumes, cancels, and filters the list by status", async () => {
    const { task } = await client.tasks.create(DAILY);
    expect((await client.tasks.pause(task.id, { cancel_running: true })).status).toBe("paused");
    const paused = await client.tasks.list({ status: "paused" });
    expect(paused.items.map((x) => x.id)).toContain(task.id);
    expect((await client.tasks.resume(task.id, { catch_up: "none" })).status).toBe("enabled");
    expect((await client.tasks.cancel(task.id)).status).toBe("cancelled");
    const again = await apiError(client.tasks.resume(task.id));
    expect(again).toMatchObject({ status: 409, code: "illegal_transition" });
  });

  it("triggers once per key, backfills, previews and explains", async () => {
    const { task } = await client.tasks.create(DAILY);
    const run = await client.tasks.trigger(task.id, { idempotency_key: "now" });
    expect((await client.tasks.trigger(task.id, { idempotency_key: "now" })).id).toBe(run.id);
    expect(run).toMatchObject({ trigger: "manual", status: "queued", task_id: task.id });
    const backfill = await client.tasks.backfill(task.id, {
      from: "2026-03-05T00:00:00Z",
      to: "2026-03-07T00:00:00Z",
    });
    expect(backfill.runs.map((r) => r.scheduled_for)).toEqual([
      "2026-03-05T08:00:00Z",
      "2026-03-06T08:00:00Z",
    ]);
    expect(backfill.already_backfilled).toBe(0);
    const preview = await client.tasks.preview(task.id, 2);
    expect(preview.occurrences.map((o) => [o.at, o.wall, o.offset])).toEqual([
      ["2026-03-08T08:00:00Z", "2026-03-08T09:00:00", "+01:00"],
      ["2026-03-09T08:00:00Z", "2026-03-09T09:00:00", "+01:00"],
    ]);
    const explanation = await client.tasks.explain(task.id, "2026-03-08T08:00:00Z");
    expect(explanation.verdict).toBe("not_yet_decided");
    expect(explanation.occurrence?.scheduled_for).toBe("2026-03-08T08:00:00Z");
  });

  it("rotates a task's signing secret, showing the new one once", async () => {
    const { task } = await client.tasks.create({
      ...DAILY,
      target: { kind: "webhook", url: "https://hooks.example.com/run" },
    });
    const rotated = await client.tasks.rotateSecret(task.id, { grace: "PT10M" });
    expect(rotated.webhook_secret).not.toBeNull();
    expect(rotated.webhook_secret).not.toBe(task.webhook_secret);
    expect(rotated.task.webhook_secret).toBe(rotated.webhook_secret);
    expect(rotated.previous_valid_until).not.toBeNull();
    const refused = await apiError(client.tasks.rotateSecret(task.id, { grace: "P30D" }));
    expect(refused).toMatchObject({ status: 422, code: "validation_failed" });
  });

  it("lists a task's runs by pages and filters", async () => {
    const { task } = await client.tasks.create(DAILY);
    for (let i = 0; i < 3; i++) await client.tasks.trigger(task.id);
    const newest = await client.tasks.runs(task.id, { trigger: "manual", limit: 1 });
    expect(newest.items).toHaveLength(1);
    const all: string[] = [];
    for await (const page of client.tasks.runPages(task.id, { limit: 2 })) {
      all.push(...page.items.map((r) => r.id));
    }
    expect(all).toHaveLength(3);
    expect(all[0]).toBe(newest.items[0]?.id);
    expect((await client.tasks.runs(task.id, { status: "succeeded" })).items).toEqual([]);
  });

  it("deletes, refusing a stale version, and answers 404 afterwards", async () => {
    const { task } = await client.tasks.create(DAILY);
    await client.tasks.update(task.id, { title: "moved on" }, { version: task.version });
    const stale = await apiError(client.tasks.delete(task.id, { version: task.version }));
    expect(stale.code).toBe("version_conflict");
    await client.tasks.delete(task.id, { force: true, version: task.version + 1 });
    const gone = await apiError(client.tasks.get(task.id));
    expect(gone).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("client.runs", () => {
  it("reads and cancels a run once", async () => {
    const { task } = await client.tasks.create(DAILY);
    const { replayed, ...run } = await client.tasks.trigger(task.id);
    expect(replayed).toBe(false);
    expect(await client.runs.get(run.id)).toEqual(run);
    expect((await client.runs.cancel(run.id)).status).toBe("cancelled");
    const again = await apiError(client.runs.cancel(run.id));
    expect(again).toMatchObject({ status: 409, code: "illegal_transition" });
    expect((await apiError(client.runs.get("no-such-run"))).code).toBe("not_found");
  });

  it("lists runs across tasks with a list of statuses, page by page, and retries a cancelled run", async () => {
    const { task: first } = await client.tasks.create(DAILY);
    const { task: second } = await client.tasks.create({ ...DAILY, title: "second" });
    const queued = await client.tasks.trigger(first.id);
    const cancelled = await client.runs.cancel((await client.tasks.trigger(second.id)).id);
    const both = await client.runs.list({ status: ["queued", "cancelled"], limit: 200 });
    expect(both.items.map((r) => r.id)).toEqual(expect.arrayContaining([queued.id, cancelled.id]));
    expect(both.items.every((r) => ["queued", "cancelled"].includes(r.status))).toBe(true);
    const one = await client.runs.list({ status: "cancelled", task_id: second.id });
    expect(one.items.map((r) => r.id)).toEqual([cancelled.id]);
    const pages: string[] = [];
    for await (const page of client.runs.pages({ task_id: first.id, limit: 1 })) {
      pages.push(...page.items.map((r) => r.id));
    }
    expect(pages).toEqual([queued.id]);
    const bad = await apiError(client.runs.list({ scheduled_after: "not an instant" }));
    expect(bad).toMatchObject({ status: 422, code: "validation_failed" });
    const retried = await client.runs.retry(cancelled.id);
    expect(retried).toMatchObject({ id: cancelled.id, status: "queued" });
    const refused = await apiError(client.runs.retry(queued.id));
    expect(refused).toMatchObject({ status: 409, code: "illegal_transition" });
  });
});

describe("client.schedules", () => {
  it("previews a schedule no task has, with what DST does to it", async () => {
    const preview = await client.schedules.preview(
      { type: "cron", cron: "30 2 * * *", timezone: "America/New_York" },
      1,
    );
    expect(preview.occurrences[0]?.note).toEqual({
      kind: "gap_shifted",
      nominal_wall: "2026-03-08T02:30:00",
      collapsed: 0,
    });
    const bad = await apiError(client.schedules.preview({ type: "interval", every: "P1M" }));
    expect(bad.errors.map((e) => e.field)).toEqual(["schedule.every"]);
  });
});

describe("client.calendars", () => {
  it("puts, reads and lists a calendar, and a task naming it follows its edits", async () => {
    const created = await client.calendars.put("client-holidays", ["2026-03-08"]);
    expect(created).toMatchObject({ name: "client-holidays", version: 1, tasks_refreshed: 0 });
    expect(created.items).toEqual(["2026-03-08"]);
    expect(await client.calendars.get("client-holidays")).toEqual({
      name: created.name,
      items: created.items,
      version: 1,
      holidays: null,
      created_at: created.created_at,
      updated_at: created.updated_at,
    });
    const listed = await client.calendars.list();
    expect(listed.items.map((c) => c.name)).toContain("client-holidays");

    const { task } = await client.tasks.create({
      ...DAILY,
      schedule: {
        type: "cron",
        cron: "0 9 * * *",
        timezone: "Europe/Berlin",
        exclude: [{ calendar: "client-holidays" }],
      },
    });
    // Sunday the 8th is a holiday: the first fire is Monday's.
    expect(task.next_run_at).toBe("2026-03-09T08:00:00Z");
    const edited = await client.calendars.put("client-holidays", [
      { from: "2026-03-09", to: "2026-03-10" },
    ]);
    expect(edited).toMatchObject({ version: 2, tasks_refreshed: 1 });
    expect((await client.tasks.get(task.id)).next_run_at).toBe("2026-03-08T08:00:00Z");
    const preview = await client.tasks.preview(task.id, 2);
    expect(preview.occurrences.map((o) => o.at)).toEqual([
      "2026-03-08T08:00:00Z",
      "2026-03-11T08:00:00Z",
    ]);
    const skipped = preview.occurrences[1]?.suppressed_before ?? [];
    expect(skipped.map((s) => s.kind)).toEqual(["excluded", "excluded"]);
    expect(skipped[0]?.exclusion).toEqual({
      item: { from: "2026-03-09", to: "2026-03-10" },
      calendar: "client-holidays",
    });

    const inUse = await apiError(client.calendars.delete("client-holidays"));
    expect(inUse).toMatchObject({ status: 409, code: "calendar_in_use", task_id: task.id });
    await client.tasks.delete(task.id, { force: true });
    await client.calendars.delete("client-holidays");
    expect((await apiError(client.calendars.get("client-holidays"))).code).toBe("not_found");
  });

  it("walks every calendar page by page, and reads a task by its key", async () => {
    for (const n of [1, 2, 3]) await client.calendars.put(`paged-${String(n)}`, ["2026-12-25"]);
    const seen: string[] = [];
    let pages = 0;
    for await (const page of client.calendars.pages()) {
      pages += 1;
      seen.push(...page.items.map((c) => c.name));
    }
    expect(pages).toBe(1);
    expect(seen).toEqual(expect.arrayContaining(["paged-1", "paged-2", "paged-3"]));
    const small: string[][] = [];
    for await (const page of client.calendars.pages({ limit: 1 })) {
      small.push(page.items.map((c) => c.name));
    }
    expect(small.length).toBeGreaterThanOrEqual(3);
    expect(small.every((items) => items.length <= 1)).toBe(true);
    expect(small.flat()).toEqual(seen);
    for (const n of [1, 2, 3]) await client.calendars.delete(`paged-${String(n)}`);

    const { task } = await client.tasks.create({ ...DAILY, key: "client-by-key" });
    expect(await client.tasks.getByKey("client-by-key")).toEqual(task);
    expect((await apiError(client.tasks.getByKey("client-no-such-key"))).code).toBe("not_found");
    await client.tasks.delete(task.id, { force: true });
  });

  it("names each bad item of a put", async () => {
    const bad = await apiError(
      client.calendars.put("client-bad", ["2026-02-30", { days: "L * *" }, { days: "32 * *" }]),
    );
    expect(bad.status).toBe(422);
    expect(bad.errors.map((e) => e.field)).toEqual(["items.0", "items.2.days"]);
    expect((await apiError(client.calendars.delete("client-bad"))).code).toBe("not_found");
  });
});

describe("the client's transport", () => {
  it("answers health and readiness without a token, and 401 for a call that needs one", async () => {
    const anonymous = new PunctualClient({ baseUrl: t.url });
    expect(await anonymous.health()).toEqual({ status: "ok" });
    expect(await anonymous.ready()).toEqual({ status: "ready" });
    const error = await apiError(anonymous.tasks.list());
    expect(error).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("reports an unreachable server as a PunctualConnectionError", async () => {
    const port = await closedPort();
    const down = new PunctualClient({ baseUrl: `http://127.0.0.1:${port}` });
    const error: unknown = await down.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PunctualConnectionError);
    expect((error as PunctualConnectionError).message).toMatch(
      new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: `),
    );
    expect((error as PunctualConnectionError).url).toBe(`http://127.0.0.1:${port}/healthz`);
  });

  it("rejects an aborted call with the signal's reason, from the call or from the client", async () => {
    const reason = new Error("stop");
    await expect(client.tasks.list({}, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const closing = new AbortController();
    const closed = new PunctualClient({ baseUrl: t.url, signal: closing.signal });
    closing.abort(reason);
    await expect(closed.health()).rejects.toBe(reason);
  });

  it("sends its headers through an injected fetch, under the base URL's path", async () => {
    const seen: { url: string; headers: Headers; body: unknown }[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push({
        url: input instanceof Request ? input.url : input.toString(),
        headers: new Headers(init?.headers),
        body: init?.body ?? null,
      });
      const answer = { id: "t1", version: 4 };
      return Promise.resolve(Response.json({ task: answer, warnings: [] }));
    };
    const proxied = new PunctualClient({
      baseUrl: "https://example.test/punctual",
      token: "secret",
      fetch: recording,
      headers: { "x-trace": "abc" },
    });
    await proxied.tasks.update("a b/c", { title: "x" }, { version: 4 });
    await proxied.tasks.create(DAILY, { idempotency_key: "k" });
    await proxied.tasks.list({ status: "enabled", limit: 5, cursor: undefined });
    expect(seen.map((s) => s.url)).toEqual([
      "https://example.test/punctual/v1/tasks/a%20b%2Fc",
      "https://example.test/punctual/v1/tasks",
      "https://example.test/punctual/v1/tasks?status=enabled&limit=5",
    ]);
    const [patch, create, list] = seen;
    expect(patch?.headers.get("if-match")).toBe('"4"');
    expect(patch?.headers.get("authorization")).toBe("Bearer secret");
    expect(patch?.headers.get("content-type")).toBe("application/json");
    expect(patch?.headers.get("x-trace")).toBe("abc");
    expect(patch?.body).toBe('{"title":"x"}');
    expect(create?.headers.get("idempotency-key")).toBe("k");
    expect(create?.headers.get("if-match")).toBeNull();
    expect(list?.headers.get("content-type")).toBeNull();
    expect(list?.body).toBeNull();
  });

  it("reports a fetch that fails with something other than an Error as a connection error", async () => {
    const failing: typeof fetch = () =>
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a fetch stand-in (or a polyfill) may reject with a bare string
      Promise.reject("socket hang up");
    const error: unknown = await new PunctualClient({
      baseUrl: "https://example.test",
      fetch: failing,
    })
      .health()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PunctualConnectionError);
    expect((error as PunctualConnectionError).message).toBe(
      "cannot reach https://example.test: socket hang up",
    );
    expect((error as PunctualConnectionError).cause).toBe("socket hang up");
  });

  it("keeps the text of an answer that is no problem document", async () => {
    const proxy: typeof fetch = () =>
      Promise.resolve(new Response("<html>bad gateway</html>", { status: 502 }));
    const error = await apiError(
      new PunctualClient({ baseUrl: "https://example.test", fetch: proxy }).health(),
    );
    expect(error).toMatchObject({
      status: 502,
      code: "http_502",
      type: "about:blank",
      title: "HTTP 502",
      detail: "",
      errors: [],
      body: "<html>bad gateway</html>",
      message: "HTTP 502 (502)",
    });
  });
});
