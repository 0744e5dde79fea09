/**
 * Typed handlers and the failures a handler can state, through the library's composition on the
 * virtual clock (docs/library.md#typed-handlers, docs/library.md#failures-a-handler-can-state): input
 * validated at create and edit (naming the field) and again before launch (`invalid_input`, no retry),
 * `NonRetryableError` (no retry, `non_retryable`) and `RetryableError` (the next attempt after exactly
 * the delay asked for). The HTTP API refuses a bad input as the library does.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineHandler, NonRetryableError, RetryableError } from "../../src/index.js";
import { ValidationError } from "../../src/domain/errors.js";
import { createTestScheduler } from "../../src/testing.js";
import { call, startTestServer } from "../adapters/http/http-harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const MINUTE = 60_000;
const inOneMinute = { type: "once", run_at: new Date(t0 + MINUTE).toISOString() } as const;

/** The schema a later deploy may tighten: `strict` stands for the new version of the code. */
let strict = false;
const received: unknown[] = [];
const sendReminder = defineHandler({
  name: "sendReminder",
  input: z
    .object({ to: z.email(), times: z.int().min(1).default(1) })
    .refine((input) => !strict || input.to.endsWith("@example.com"), {
      error: "must be an example.com address",
      path: ["to"],
    }),
  handler: ({ input }) => {
    received.push(input);
    return { sent: input.times };
  },
});

async function fieldsOf(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => e.field);
    throw error;
  }
  throw new Error("the call was accepted");
}

describe("typed handlers", () => {
  it("validates the input at create and edit, naming the field, and hands the handler the schema's output", async () => {
    received.length = 0;
    strict = false;
    const scheduler = createTestScheduler({ start: T0, handlers: [sendReminder] });
    const bad = {
      title: "remind",
      schedule: inOneMinute,
      target: { kind: "handler", name: "sendReminder", input: { to: "nobody" } },
    };
    expect(await fieldsOf(scheduler.tasks.create(bad as never))).toEqual(["target.input.to"]);
    expect((await scheduler.tasks.list()).items).toHaveLength(0);
    const { task } = await scheduler.tasks.create({
      title: "remind",
      schedule: inOneMinute,
      target: { kind: "handler", name: "sendReminder", input: { to: "a@example.com" } },
    });
    expect(
      await fieldsOf(
        scheduler.tasks.update(task.id, {
          target: {
            kind: "handler",
            name: "sendReminder",
            input: { to: "a@example.com", times: 0 },
          },
        }),
      ),
    ).toEqual(["target.input.times"]);
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "succeeded", result: { sent: 1 } });
    expect(received).toEqual([{ to: "a@example.com", times: 1 }]);
    await scheduler.stop();
  });

  it("fails a run whose input no longer validates at launch, without retry (invalid_input)", async () => {
    received.length = 0;
    strict = false;
    const scheduler = createTestScheduler({ start: T0, handlers: [sendReminder] });
    const { task } = await scheduler.tasks.create({
      title: "remind",
      schedule: inOneMinute,
      target: { kind: "handler", name: "sendReminder", input: { to: "a@elsewhere.org" } },
      options: { retry: { max_attempts: 3, initial: "PT1S" } },
    });
    strict = true;
    await scheduler.advanceBy(5 * MINUTE);
    const runs = await scheduler.ledger(task.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", reason: "invalid_input", attempt: 1 });
    expect(runs[0]?.error).toContain("target.input.to: must be an example.com address");
    expect(received).toEqual([]);
    strict = false;
    await scheduler.stop();
  });

  it("keeps untyped handlers working beside typed ones", async () => {
    const scheduler = createTestScheduler({
      start: T0,
      handlers: { sendReminder, echo: ({ input }) => input },
    });
    const { task } = await scheduler.tasks.create({
      title: "echo",
      schedule: inOneMinute,
      target: { kind: "handler", name: "echo", input: { anything: [1, "two"] } },
    });
    await scheduler.advanceBy(2 * MINUTE);
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({
      status: "succeeded",
      result: { anything: [1, "two"] },
    });
    await scheduler.stop();
  });

  it("refuses a bad input through the HTTP API with 422 naming the field", async () => {
    const server = await startTestServer({ handlers: [sendReminder] });
    try {
      const token = await server.token("alice");
      const answer = await call(server.url, "POST", "/v1/tasks", {
        token,
        body: {
          title: "remind",
          schedule: { type: "cron", cron: "0 9 * * *" },
          target: { kind: "handler", name: "sendReminder", input: { to: "nobody" } },
        },
      });
      expect(answer.status).toBe(422);
      // eslint-disable-next-line @typescript-eslint/no-unsafe-member-access -- an untyped JSON answer
      expect(answer.body.errors).toEqual([
        expect.objectContaining({ field: "target.input.to" }) as unknown,
      ]);
    } finally {
      await server.stop();
    }
  });
});

describe("failures a handler can state", () => {
  it("ends the run at once on NonRetryableError, whatever attempts are left (non_retryable)", async () => {
    let calls = 0;
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        charge: () => {
          calls++;
          throw new NonRetryableError("card declined");
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "charge",
      schedule: inOneMinute,
      target: { kind: "handler", name: "charge" },
      options: { retry: { max_attempts: 5, initial: "PT1S" } },
    });
    await scheduler.advanceBy(10 * MINUTE);
    expect(calls).toBe(1);
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({
      status: "failed",
      reason: "non_retryable",
      error: "card declined",
      failures: 1,
    });
    expect(await scheduler.tasks.get(task.id)).toMatchObject({ last_error: "card declined" });
    await scheduler.stop();
  });

  it("queues the next attempt after exactly the delay RetryableError asks for", async () => {
    const attempts: number[] = [];
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        fetchRates: () => {
          attempts.push(Date.now());
          if (attempts.length === 1)
            throw new RetryableError("rate limited", { delayMs: 7 * MINUTE });
          return "ok";
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "rates",
      schedule: inOneMinute,
      target: { kind: "handler", name: "fetchRates" },
      options: { retry: { max_attempts: 2, initial: "PT1S", max_delay: "PT2S" } },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [waiting] = await scheduler.ledger(task.id);
    expect(waiting).toMatchObject({ status: "queued", failures: 1, error: "rate limited" });
    expect(Date.parse(waiting?.not_before ?? "")).toBe(t0 + MINUTE + 7 * MINUTE);
    await scheduler.advanceTo(t0 + 7 * MINUTE + 59_000);
    expect((await scheduler.ledger(task.id))[0]?.status).toBe("queued");
    await scheduler.advanceTo(t0 + 9 * MINUTE);
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({
      status: "succeeded",
      attempt: 2,
    });
    await scheduler.stop();
  });

  it("ends the run failed when RetryableError leaves no attempt", async () => {
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        once: () => {
          throw new RetryableError("later", { delayMs: MINUTE });
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "once",
      schedule: inOneMinute,
      target: { kind: "handler", name: "once" },
    });
    await scheduler.advanceBy(5 * MINUTE);
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({
      status: "failed",
      reason: "target_failed",
      error: "later",
    });
    await scheduler.stop();
  });
});
