/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument -- API answers are untyped JSON, checked by the assertions */
/**
 * Issue 21's "Starving everyone", through the HTTP API with two owners (docs/semantics.md#fair-share): Bob
 * cannot give his runs a ten-year `run_timeout` (422 naming the limit), and his 16 webhook runs whose
 * receiver answers 202 and never completes hold at most his share of the budget (`serve`'s default:
 * half), so Alice's run is launched and succeeds beside them. Cancelling one of Bob's runs, or
 * force-deleting its task, ends it `cancelled` at once though its receiver cannot be told (no
 * `cancel_url`), frees its slot, and its completion URL still takes a late verdict (docs/semantics.md#cancellation).
 * Real time with the coordinator on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { Receiver } from "../../helpers/webhook-receiver.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let receiver: Receiver;
let alice: string;
let bob: string;

beforeAll(async () => {
  receiver = await startReceiver({
    "/never": json(202, { accepted: true }),
    "/quick": json(200, { status: "succeeded", result: { ok: true } }),
  });
  t = await startTestServer({
    runCoordinator: true,
    coordinator: { tickMs: 50 },
    webhookAllow: ["127.0.0.1"],
    policy: { maxConcurrentRuns: 16, maxActiveRunsPerOwner: 8 },
  });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await t.stop();
  await receiver.close();
});

function webhookTask(path: string, runTimeout: string): Record<string, unknown> {
  return {
    title: `webhook ${path}`,
    schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
    target: { kind: "webhook", url: receiver.url(path) },
    options: { run_timeout: runTimeout, overlap: "allow_all" },
  };
}

describe("two owners on one budget", () => {
  it("refuses a run_timeout over the operator's maximum, naming the limit", async () => {
    const refused = await call(t.url, "POST", "/v1/tasks", {
      token: bob,
      body: webhookTask("/never", "P3650D"),
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ limit: "run_timeout", max: 86_400 });
  });

  it("launches Alice's run while Bob's 16 never-completing runs wait beyond his share", async () => {
    for (let i = 0; i < 16; i++) {
      const created = await call(t.url, "POST", "/v1/tasks", {
        token: bob,
        body: webhookTask("/never", "PT24H"),
      });
      expect(created.status).toBe(201);
      const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
        token: bob,
      });
      expect(run.status).toBe(202);
    }
    await waitFor(() => (receiver.requestsTo("/never").length >= 8 ? true : undefined), {
      timeoutMs: 10_000,
      what: "Bob's share of runs to launch",
    });
    const created = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: webhookTask("/quick", "PT1M"),
    });
    const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
      token: alice,
    });
    const done = await waitFor(
      async () => {
        const current = await call(t.url, "GET", `/v1/runs/${run.body.id}`, { token: alice });
        return current.body.status === "succeeded" ? current.body : undefined;
      },
      { timeoutMs: 10_000, what: "Alice's run to succeed" },
    );
    expect(done.result).toEqual({ ok: true });
    // Bob holds his share and no more, though half the budget stood free the whole time.
    expect(receiver.requestsTo("/never")).toHaveLength(8);
  });

  it("cancels Bob's runs at once though their receiver cannot be told, and takes a late verdict", async () => {
    const never = receiver.requestsTo("/never").map((r) => JSON.parse(r.body));
    const [first, second] = never;
    // Cancelled: no cancel_url, so the run ends at once and gives its slot back.
    const cancelled = await call(t.url, "POST", `/v1/runs/${first.run.id}/cancel`, { token: bob });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "cancelled", reason: "cancel_requested" });
    expect(cancelled.body.error).toContain("target not told");
    // Force-deleted: the same, and its completion URL still takes the receiver's late verdict.
    const deleted = await call(t.url, "DELETE", `/v1/tasks/${second.task.id}?force=true`, {
      token: bob,
    });
    expect(deleted.status).toBe(204);
    const late = await call(t.url, "POST", pathOf(second.completion_url), {
      body: { status: "succeeded", result: { late: true } },
    });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ id: second.run.id, status: "cancelled", recorded: false });
    // The two freed slots go to Bob's waiting runs.
    await waitFor(() => (receiver.requestsTo("/never").length >= 10 ? true : undefined), {
      timeoutMs: 10_000,
      what: "two more of Bob's runs to launch",
    });
  });
});

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}
