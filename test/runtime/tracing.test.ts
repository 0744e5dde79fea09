/**
 * OpenTelemetry spans (docs/operations.md#tracing), with the SDK's in-memory exporter on the virtual
 * clock: one fire makes an admission span, a claim span, a launch span (a root linked to the claim, with
 * the run's ids and the task's key) and a completion span under the launch; the webhook receives the
 * launch span's `traceparent`, so a user's trace continues in the target. Without a provider nothing is
 * sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createTestScheduler } from "../../src/testing.js";
import type { TestScheduler } from "../../src/testing.js";
import { json, startReceiver } from "../helpers/webhook-receiver.js";
import type { Receiver } from "../helpers/webhook-receiver.js";

const T0 = "2026-01-05T00:00:00Z";
const MINUTE = 60_000;
const inOneMinute = { type: "once" as const, run_at: "2026-01-05T00:01:00Z" };

const open: { scheduler?: TestScheduler; receiver?: Receiver } = {};

afterEach(async () => {
  trace.disable();
  await open.scheduler?.stop();
  await open.receiver?.close();
  delete open.scheduler;
  delete open.receiver;
});

function traced(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider };
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
}

describe("tracing", () => {
  it("makes the span tree of one fire: admission, claim, the launch linked to it, the completion under it", async () => {
    const { exporter, provider } = traced();
    const scheduler = createTestScheduler({
      start: T0,
      handlers: { work: () => ({ done: true }) },
      tracerProvider: provider,
    });
    open.scheduler = scheduler;
    const { task } = await scheduler.tasks.create({
      title: "traced",
      key: "nightly-report",
      schedule: inOneMinute,
      target: { kind: "handler", name: "work" },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run?.status).toBe("succeeded");

    const spans = exporter.getFinishedSpans();
    const admissions = spans.filter((s) => s.name === "punctual.admission");
    expect(admissions.some((s) => s.attributes["punctual.admission.tasks"] === 1)).toBe(true);
    const claims = spans.filter(
      (s) => s.name === "punctual.claim" && s.attributes["punctual.claim.runs"] === 1,
    );
    expect(claims).toHaveLength(1);
    const launch = only(spans, "punctual.launch");
    expect(launch.attributes).toMatchObject({
      "punctual.run.id": run!.id,
      "punctual.task.id": task.id,
      "punctual.task.key": "nightly-report",
      "punctual.run.attempt": 1,
      "punctual.run.trigger": "scheduled",
      "punctual.target.kind": "handler",
      "punctual.launch.outcome": "launched",
    });
    // A root of its own trace (one trace per run), linked to the claim that took it.
    expect(launch.parentSpanContext).toBeUndefined();
    expect(launch.links.map((l) => l.context.spanId)).toEqual([claims[0]!.spanContext().spanId]);
    const complete = only(spans, "punctual.complete");
    expect(complete.parentSpanContext?.spanId).toBe(launch.spanContext().spanId);
    expect(complete.spanContext().traceId).toBe(launch.spanContext().traceId);
    expect(complete.attributes).toMatchObject({
      "punctual.run.id": run!.id,
      "punctual.run.verdict": "succeeded",
    });
    // Bounded attributes only: never the input or the result.
    for (const span of spans) {
      expect(JSON.stringify(span.attributes)).not.toContain("done");
    }
  });

  it("sends the launch span's traceparent to a webhook, and nothing without a provider", async () => {
    const receiver = await startReceiver({ "/hook": json(200, { status: "succeeded" }) });
    open.receiver = receiver;
    const { exporter, provider } = traced();
    const scheduler = createTestScheduler({
      start: T0,
      webhookAllow: ["127.0.0.1"],
      tracerProvider: provider,
    });
    open.scheduler = scheduler;
    await scheduler.tasks.create({
      title: "hook",
      schedule: inOneMinute,
      target: { kind: "webhook", url: receiver.url("/hook") },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const launch = only(exporter.getFinishedSpans(), "punctual.launch");
    const { traceId, spanId } = launch.spanContext();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers["traceparent"]).toBe(`00-${traceId}-${spanId}-01`);
    // The verdict came with the 2xx: its span is under the launch too.
    const complete = only(exporter.getFinishedSpans(), "punctual.complete");
    expect(complete.parentSpanContext?.spanId).toBe(spanId);

    const plain = createTestScheduler({ start: T0, webhookAllow: ["127.0.0.1"] });
    try {
      await plain.tasks.create({
        title: "untraced",
        schedule: inOneMinute,
        target: { kind: "webhook", url: receiver.url("/hook") },
      });
      await plain.advanceBy(2 * MINUTE);
    } finally {
      await plain.stop();
    }
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]!.headers["traceparent"]).toBeUndefined();
  });

  it("records the spans of a fire once a global provider is registered after the scheduler was made", async () => {
    // Until then every span would be a no-op, and none is made (no attributes built per fire).
    const scheduler = createTestScheduler({
      start: T0,
      handlers: { work: () => ({ done: true }) },
    });
    open.scheduler = scheduler;
    const { task } = await scheduler.tasks.create({
      title: "traced later",
      schedule: inOneMinute,
      target: { kind: "handler", name: "work" },
    });
    const { exporter, provider } = traced();
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run?.status).toBe("succeeded");
    const launch = only(exporter.getFinishedSpans(), "punctual.launch");
    expect(launch.attributes["punctual.run.id"]).toBe(run!.id);
    const complete = only(exporter.getFinishedSpans(), "punctual.complete");
    expect(complete.parentSpanContext?.spanId).toBe(launch.spanContext().spanId);
  });
});
