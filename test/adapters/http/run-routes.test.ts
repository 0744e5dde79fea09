/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- API answers are untyped JSON, checked by the assertions */
/**
 * `GET /v1/runs` (runs across tasks, filtered, owner-scoped) and `POST /v1/runs/{id}/retry` (redrive)
 * on a real server with the coordinator on: a handler that fails, then succeeds or blocks, as a test
 * switches it. Real time; waits poll the API with a bounded timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;
let bob: string;
let mode: "fail" | "succeed" | "block" = "fail";
let release: () => void = () => undefined;
const blocked = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  t = await startTestServer({
    runCoordinator: true,
    coordinator: { tickMs: 50 },
    handlers: {
      switchable: async () => {
        if (mode === "fail") throw new Error("switched to fail");
        if (mode === "block") await blocked;
        return { done: true };
      },
    },
  });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  release();
  await t.stop();
});

async function waitForStatus(id: string, status: string): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = (await call(t.url, "GET", `/v1/runs/${id}`, { token: alice })).body;
    if (run.status === status) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${String(run.status)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function createTask(title: string, overlap = "skip"): Promise<string> {
  const created = await call(t.url, "POST", "/v1/tasks", {
    token: alice,
    body: {
      title,
      schedule: { type: "cron", cron: "0 0 1 1 *" },
      target: { kind: "handler", name: "switchable" },
      options: { overlap },
    },
  });
  expect(created.status).toBe(201);
  return created.body.task.id as string;
}

async function failedRun(taskId: string): Promise<any> {
  mode = "fail";
  const run = (await call(t.url, "POST", `/v1/tasks/${taskId}/trigger`, { token: alice })).body;
  return waitForStatus(run.id as string, "failed");
}

describe("GET /v1/runs", () => {
  it("lists the caller's runs across tasks with filters, and nobody else's", async () => {
    const first = await createTask("first", "allow_all");
    const second = await createTask("second", "allow_all");
    const failed = await failedRun(first);
    mode = "succeed";
    const ok = (await call(t.url, "POST", `/v1/tasks/${second}/trigger`, { token: alice })).body;
    await waitForStatus(ok.id as string, "succeeded");

    const all = await call(t.url, "GET", "/v1/runs", { token: alice });
    expect(all.status).toBe(200);
    const ids = all.body.items.map((r: any) => r.id);
    expect(ids).toEqual(expect.arrayContaining([failed.id, ok.id]));
    const onlyFailed = await call(t.url, "GET", "/v1/runs?status=failed&target_kind=handler", {
      token: alice,
    });
    expect(onlyFailed.body.items.map((r: any) => r.status)).not.toContain("succeeded");
    expect(onlyFailed.body.items.map((r: any) => r.id)).toContain(failed.id);
    const both = await call(t.url, "GET", "/v1/runs?status=failed&status=succeeded", {
      token: alice,
    });
    expect(both.body.items.map((r: any) => r.id)).toEqual(
      expect.arrayContaining([failed.id, ok.id]),
    );
    const since = new Date(Date.parse(failed.finished_at as string) - 1).toISOString();
    const recent = await call(
      t.url,
      "GET",
      `/v1/runs?task_id=${second}&finished_after=${encodeURIComponent(since)}&trigger=manual`,
      { token: alice },
    );
    expect(recent.body.items.map((r: any) => r.id)).toEqual([ok.id]);
    const paged = await call(t.url, "GET", "/v1/runs?limit=1", { token: alice });
    expect(paged.body.items).toHaveLength(1);
    const next = await call(t.url, "GET", `/v1/runs?limit=1&cursor=${paged.body.next_cursor}`, {
      token: alice,
    });
    expect(next.body.items[0].id).not.toBe(paged.body.items[0].id);

    const bobs = await call(t.url, "GET", "/v1/runs", { token: bob });
    expect(bobs.body).toEqual({ items: [], next_cursor: null });
  });

  it.each([
    ["status=broken", "status"],
    ["target_kind=robot", "target_kind"],
    ["late=maybe", "late"],
    ["scheduled_after=yesterday", "scheduled_after"],
    ["finished_after=2030-01-02T00:00:00Z&finished_before=2030-01-01T00:00:00Z", "finished_before"],
    ["cursor=not-a-cursor", "cursor"],
    ["colour=red", "query"],
  ])("refuses %s with 422 naming the field", async (query, field) => {
    const answer = await call(t.url, "GET", `/v1/runs?${query}`, { token: alice });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
  });
});

describe("POST /v1/runs/{id}/retry", () => {
  it("puts a failed run back in the queue as its next attempt, same key, past max_attempts", async () => {
    const task = await createTask("redriven");
    const failed = await failedRun(task);
    expect(failed).toMatchObject({ attempt: 1, failures: 1 });
    expect((await call(t.url, "POST", `/v1/runs/${failed.id}/retry`, { token: bob })).status).toBe(
      404,
    );
    mode = "succeed";
    const retried = await call(t.url, "POST", `/v1/runs/${failed.id}/retry`, { token: alice });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: failed.id, status: "queued", finished_at: null });
    const done = await waitForStatus(failed.id as string, "succeeded");
    expect(done).toMatchObject({
      attempt: 2,
      failures: 1,
      idempotency_key: failed.idempotency_key,
    });
    const again = await call(t.url, "POST", `/v1/runs/${failed.id}/retry`, { token: alice });
    expect(again.status).toBe(409);
    expect(again.body.type).toBe("https://punctual.dev/problems/illegal_transition");
    expect(again.body.detail).toContain("succeeded");
  });

  it("is refused under overlap skip while the task has an active run (409 run_active)", async () => {
    const task = await createTask("busy");
    const failed = await failedRun(task);
    mode = "block";
    const active = (await call(t.url, "POST", `/v1/tasks/${task}/trigger`, { token: alice })).body;
    await waitForStatus(active.id as string, "running");
    const refused = await call(t.url, "POST", `/v1/runs/${failed.id}/retry`, { token: alice });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe("https://punctual.dev/problems/run_active");
    expect((await call(t.url, "GET", `/v1/runs/${failed.id}`, { token: alice })).body.status).toBe(
      "failed",
    );
    const running = await call(t.url, "POST", `/v1/runs/${active.id}/retry`, { token: alice });
    expect(running.status).toBe(409);
    expect(running.body.detail).toContain("still active");
    release();
    await waitForStatus(active.id as string, "succeeded");
  });
});
