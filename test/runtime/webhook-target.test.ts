/**
 * The `webhook` target end to end through the library's composition on the virtual clock, against real
 * receivers on 127.0.0.1 (docs/semantics.md#launch, docs/semantics.md#completion, docs/security.md): a signed launch that completes the run, SSRF refusals,
 * redirects not followed, busy answers, and uncertain launches that are never re-sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { taskId } from "../../src/domain/ids.js";
import { createTestScheduler } from "../../src/testing.js";
import type { TestScheduler } from "../../src/testing.js";
import { json, startReceiver, verifySignature } from "../helpers/webhook-receiver.js";
import type { Behaviour, ReceivedRequest, Receiver } from "../helpers/webhook-receiver.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const MINUTE = 60_000;
const inOneMinute = { type: "once", run_at: new Date(t0 + MINUTE).toISOString() };

const open: { receiver?: Receiver; scheduler?: TestScheduler } = {};

afterEach(async () => {
  await open.scheduler?.stop();
  await open.receiver?.close();
  delete open.scheduler;
  delete open.receiver;
});

async function setUp(routes: Record<string, Behaviour>, webhookAllow: string[] = ["127.0.0.1"]) {
  const receiver = await startReceiver(routes);
  const scheduler = createTestScheduler({ start: T0, webhookAllow });
  open.receiver = receiver;
  open.scheduler = scheduler;
  return { receiver, scheduler };
}

async function secretOf(scheduler: TestScheduler, id: string): Promise<string> {
  const rt = await scheduler.runtime();
  const task = await rt.store.tasks.findTask({ kind: "all" }, taskId(id));
  return task!.webhookSecret;
}

describe("webhook target", () => {
  it("fires a signed request that the receiver verifies, and the run succeeds with its result", async () => {
    const secrets: string[] = [];
    const verifying: Behaviour = (request: ReceivedRequest, res: ServerResponse) => {
      const signature = request.headers["punctual-signature"] as string | undefined;
      const valid = secrets.some((secret) => verifySignature(signature, request.body, secret));
      json(
        valid ? 200 : 401,
        valid ? { status: "succeeded", result: { exported: 42 } } : { error: "bad signature" },
      )(request, res);
    };
    const { receiver, scheduler } = await setUp({ "/hook": verifying });
    const { task } = await scheduler.tasks.create({
      title: "export",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook"), input: { table: "orders" } },
      metadata: { team: "data" },
    });
    secrets.push(await secretOf(scheduler, task.id));
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({
      status: "succeeded",
      result: { exported: 42 },
      target_run_id: run!.id,
    });
    expect(receiver.requests).toHaveLength(1);
    const body = JSON.parse(receiver.requests[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      task: { id: task.id, title: "export", metadata: { team: "data" } },
      run: { id: run!.id, trigger: "scheduled", attempt: 1 },
      occurrence: { scheduled_for: "2026-01-05T00:01:00Z", late: false },
      input: { table: "orders" },
    });
    expect(receiver.requests[0]!.headers["idempotency-key"]).toBe(run!.idempotency_key);
  });

  it("refuses a webhook at 127.0.0.1 that is not allow-listed at create and at edit, naming SSRF", async () => {
    const { receiver, scheduler } = await setUp({ "/hook": json(200) }, []);
    await expect(
      scheduler.tasks.create({
        title: "internal",
        schedule: inOneMinute,
        target: { kind: "webhook", url: receiver.url("/hook") },
      }),
    ).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ field: "target.url", message: expect.stringMatching(/SSRF/) as unknown }],
    });
    const { task } = await scheduler.tasks.create({
      title: "public",
      schedule: inOneMinute,
      target: { kind: "webhook", url: "https://hooks.example/x" },
    });
    await expect(
      scheduler.tasks.update(task.id, {
        target: { kind: "webhook", url: "https://[::1]/x", cancel_url: "http://hooks.example/c" },
      }),
    ).rejects.toMatchObject({
      errors: [
        {
          field: "target.url",
          message: expect.stringMatching(/\[::1\] is a loopback address/) as unknown,
        },
        { field: "target.cancel_url", message: expect.stringMatching(/neither https/) as unknown },
      ],
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it("does not follow a redirect to a private address", async () => {
    const { receiver, scheduler } = await setUp({
      "/hook": (_request, res) => {
        res.writeHead(307, { location: "http://10.0.0.1/admin" });
        res.end();
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "redirected",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook") },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "failed", reason: "launch_failed" });
    expect(run!.error).toMatch(/redirects are not followed/);
    expect(receiver.requests).toHaveLength(1);
  });

  it("leaves a 5xx launch running with no target run id, never re-sent, until the run timeout", async () => {
    const { receiver, scheduler } = await setUp({ "/hook": json(503, { error: "overloaded" }) });
    const { task } = await scheduler.tasks.create({
      title: "flaky",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook") },
      options: { run_timeout: "PT10M" },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [running] = await scheduler.ledger(task.id);
    expect(running).toMatchObject({ status: "running", target_run_id: null });
    await scheduler.advanceBy(5 * MINUTE);
    expect(receiver.requests).toHaveLength(1);
    await scheduler.advanceBy(10 * MINUTE);
    const [ended] = await scheduler.ledger(task.id);
    expect(ended).toMatchObject({ status: "timed_out" });
    expect(receiver.requests).toHaveLength(1);
  });

  it("keeps a 202 launch running until its completion, with the run id as target run id", async () => {
    const { receiver, scheduler } = await setUp({ "/hook": json(202) });
    const { task } = await scheduler.tasks.create({
      title: "async",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook") },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "running", target_run_id: run!.id });
  });

  it("queues a busy answer again and launches it later with the same idempotency key", async () => {
    let calls = 0;
    const { receiver, scheduler } = await setUp({
      "/hook": (request, res) => {
        calls++;
        json(calls === 1 ? 409 : 200)(request, res);
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "busy",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook") },
    });
    await scheduler.advanceBy(10 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "succeeded", failures: 0 });
    expect(receiver.requests.map((r) => r.headers["idempotency-key"])).toEqual([
      run!.idempotency_key,
      run!.idempotency_key,
    ]);
  });
});
