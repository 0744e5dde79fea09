/**
 * The API's shapes at the edges of the application (docs/api.md): instants and durations as the API
 * writes them, a target read from its input and shown back, and the warn line of every kind of failure
 * (docs/operations.md#logs), judged by what a reader of the API or the log sees (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import { logRunFailures } from "../../src/application/events/run-failure-log.js";
import { targetFrom, targetSchema } from "../../src/application/shapes/target-input.js";
import {
  formatDuration,
  formatInstant,
  receiverSecret,
  runView,
  targetView,
  taskView,
} from "../../src/application/shapes/view-mappers.js";
import type { Run } from "../../src/domain/run.js";
import { instant } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { buildRun, buildTask } from "../domain/builders.js";

describe("formatInstant", () => {
  const iso = (at: number): string => {
    const text = new Date(at).toISOString();
    return text.endsWith(".000Z") ? `${text.slice(0, -5)}Z` : text;
  };

  it("writes what toISOString writes, without a zero fraction, over the whole range", () => {
    const samples = [
      0,
      1,
      999,
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12, 0, 0),
      Date.UTC(2026, 2, 29, 1, 0, 0, 10),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    let seed = 7;
    for (let i = 0; i < 2_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      samples.push(Math.floor((seed / 2 ** 31) * Date.UTC(9999, 11, 31)));
    }
    for (const at of samples) expect(formatInstant(instant(at)), String(at)).toBe(iso(at));
    expect(formatInstant(instant(Date.UTC(2026, 0, 5, 9, 30)))).toBe("2026-01-05T09:30:00Z");
    expect(formatInstant(null)).toBeNull();
  });

  it("falls back to toISOString before 1970, from year 10000 and for a fraction of a millisecond", () => {
    expect(formatInstant(-1 as Instant)).toBe("1969-12-31T23:59:59.999Z");
    expect(formatInstant(Date.UTC(1900, 0, 1) as Instant)).toBe("1900-01-01T00:00:00Z");
    expect(formatInstant(Date.UTC(10_000, 0, 1) as Instant)).toBe("+010000-01-01T00:00:00Z");
    expect(formatInstant(0.5 as Instant)).toBe("1970-01-01T00:00:00Z");
  });
});

describe("formatInstant's memo of recent instants (docs/benchmarks.md)", () => {
  const iso = (at: number): string => {
    const text = new Date(at).toISOString();
    return text.endsWith(".000Z") ? `${text.slice(0, -5)}Z` : text;
  };

  it("never answers an instant with another that shares its slot, minute or day", () => {
    const base = Date.UTC(2026, 11, 7, 10, 59, 58, 0);
    const samples: number[] = [];
    // The same slot (the table has 251), a second or a millisecond apart, across a minute, an hour, a
    // day and a year boundary, alternating so that each remembered minute is left and come back to.
    for (const start of [
      base,
      Date.UTC(2026, 11, 31, 23, 59, 59, 500),
      Date.UTC(2028, 1, 28, 23, 59, 0),
    ]) {
      for (let i = 0; i < 40; i++) {
        samples.push(
          start + i * 251,
          start + i * 251 * 60,
          start + i * 1000,
          start + i,
          start - i * 86_400_000,
        );
        samples.push(start + (i % 2) * 60_000 + i, start + (i % 2) * 251);
      }
    }
    for (const at of samples) expect(formatInstant(instant(at)), String(at)).toBe(iso(at));
    // And again, from the memo this time, in the reverse order.
    for (const at of samples.reverse())
      expect(formatInstant(instant(at)), String(at)).toBe(iso(at));
  });
});

describe("a run's view", () => {
  it("keeps its JSON, keys and spread: every instant formatted, in the schema's order", () => {
    const at = Date.UTC(2026, 11, 7, 10, 0, 0);
    const run = buildRun({
      scheduledFor: instant(at),
      fireAt: instant(at + 1),
      missedUntil: instant(at + 2),
      notBefore: instant(at + 3_000),
      claimExpiresAt: instant(at + 60_000),
      queuedAt: instant(at - 1),
      launchedAt: instant(at + 5),
      deadlineAt: instant(at + 3_600_000),
      finishedAt: instant(at + 86_400_000),
      cancelRequestedAt: instant(at + 7),
      moved: true,
    });
    const view = runView(run);
    const expected = {
      scheduled_for: "2026-12-07T10:00:00Z",
      fire_at: "2026-12-07T10:00:00.001Z",
      missed_until: "2026-12-07T10:00:00.002Z",
      not_before: "2026-12-07T10:00:03Z",
      claim_expires_at: "2026-12-07T10:01:00Z",
      queued_at: "2026-12-07T09:59:59.999Z",
      launched_at: "2026-12-07T10:00:00.005Z",
      deadline_at: "2026-12-07T11:00:00Z",
      finished_at: "2026-12-08T10:00:00Z",
      cancel_requested_at: "2026-12-07T10:00:00.007Z",
      moved_from: "2026-12-07T10:00:00Z",
    };
    expect(view).toMatchObject(expected);
    expect(Object.keys(view)).toEqual([
      "id",
      "task_id",
      "owner",
      "trigger",
      "scheduled_for",
      "fire_at",
      "status",
      "reason",
      "missed_count",
      "missed_until",
      "attempt",
      "failures",
      "not_before",
      "thread_scope",
      "thread_id",
      "exclusive",
      "claim_expires_at",
      "target_run_id",
      "idempotency_key",
      "queued_at",
      "launched_at",
      "deadline_at",
      "finished_at",
      "lateness_ms",
      "late",
      "cancel_requested_at",
      "error",
      "result",
      "moved_from",
    ]);
    expect(Object.getPrototypeOf(view)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(view))).toEqual({ ...view });
    expect({ ...view }).toStrictEqual(view);
    // Shown again, the same text (from the memo).
    expect(JSON.stringify(runView(run))).toBe(JSON.stringify(view));
  });
});

describe("formatDuration", () => {
  it("writes whole hours, minutes and seconds, leaving out the zero parts", () => {
    expect(formatDuration(0)).toBe("PT0S");
    expect(formatDuration(90_000)).toBe("PT1M30S");
    expect(formatDuration(3_600_000)).toBe("PT1H");
    expect(formatDuration(3_661_000)).toBe("PT1H1M1S");
    expect(formatDuration(7_200_000 + 5_000)).toBe("PT2H5S");
    expect(formatDuration(49 * 3_600_000)).toBe("PT49H");
  });

  it("writes seconds with a fraction when not whole", () => {
    expect(formatDuration(1_500)).toBe("PT1.5S");
    expect(formatDuration(61_250)).toBe("PT61.25S");
  });
});

describe("a target read from its input and shown back", () => {
  const roundTrip = (input: unknown): unknown => targetView(targetFrom(targetSchema.parse(input)));

  it("shows an agent target with every optional field as it was given", () => {
    const input = {
      kind: "agent",
      server: "main",
      assistant_id: "reporter",
      input: { messages: [] },
      config: { configurable: { model: "small" }, recursion_limit: 10, tags: ["nightly"] },
      context: { team: "ops" },
      metadata: { source: "punctual" },
      on_run_completed: "delete",
    };
    expect(roundTrip(input)).toEqual(input);
  });

  it("fills an agent target's and a webhook's defaults, and a handler's input", () => {
    expect(roundTrip({ kind: "agent", server: "main", assistant_id: "a" })).toEqual({
      kind: "agent",
      server: "main",
      assistant_id: "a",
      input: null,
    });
    expect(roundTrip({ kind: "agent", server: "main", assistant_id: "a", config: {} })).toEqual({
      kind: "agent",
      server: "main",
      assistant_id: "a",
      input: null,
      config: {},
    });
    expect(roundTrip({ kind: "webhook", url: "https://example.test/hook" })).toEqual({
      kind: "webhook",
      url: "https://example.test/hook",
      method: "POST",
      headers: {},
      input: null,
      cancel_url: null,
      idempotent: false,
      signature: "punctual",
    });
    expect(roundTrip({ kind: "handler", name: "log" })).toEqual({
      kind: "handler",
      name: "log",
      input: null,
    });
  });

  it("keeps every field a webhook target sets", () => {
    const input = {
      kind: "webhook",
      url: "http://example.test/hook",
      method: "PUT",
      headers: { "x-team": "ops" },
      input: { a: 1 },
      cancel_url: "https://example.test/cancel",
      idempotent: true,
      signature: "standard_webhooks",
    };
    expect(roundTrip(input)).toEqual(input);
  });

  it("refuses a webhook URL that is not absolute http(s), and a header that could split a request", () => {
    for (const url of ["ftp://example.test/x", "/relative", "not a url"]) {
      expect(targetSchema.safeParse({ kind: "webhook", url }).success, url).toBe(false);
    }
    const header = (headers: Record<string, string>) =>
      targetSchema.safeParse({ kind: "webhook", url: "https://example.test", headers }).success;
    expect(header({ "x-ok": "fine value\twith tab" })).toBe(true);
    expect(header({ "bad name": "x" })).toBe(false);
    expect(header({ "x-split": "a\r\nset-cookie: b" })).toBe(false);
  });
});

describe("the warn line of a failure", () => {
  function logged(
    run: Run,
    from: Run["status"],
  ): { fields: Record<string, unknown>; message: string }[] {
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const events = new SchedulerEvents();
    const warn = (fields: Record<string, unknown>, message: string): void => {
      lines.push({ fields, message });
    };
    const ignore = (): void => undefined;
    logRunFailures(events, { debug: ignore, info: ignore, warn, error: ignore });
    events.emit("run:changed", { run, from, targetKind: "handler" });
    return lines;
  }

  it("names a timeout, a lost replica's retry and a failure without an error", () => {
    const timedOut = logged(buildRun({ status: "timed_out", reason: "run_timeout" }), "running");
    expect(timedOut.map((l) => l.message)).toEqual(["run timed out"]);
    const lost = logged(buildRun({ status: "queued", reason: "replica_lost" }), "running");
    expect(lost.map((l) => l.message)).toEqual([
      "run lost its replica: queued for another attempt",
    ]);
    const failed = logged(buildRun({ status: "failed", reason: "launch_failed" }), "launching");
    expect(failed[0]?.message).toBe("run failed");
    expect(failed[0]?.fields).not.toHaveProperty("error");
  });

  it("stays silent for a success, a plain retry and a run queued again from launching", () => {
    expect(logged(buildRun({ status: "succeeded" }), "running")).toEqual([]);
    expect(
      logged(buildRun({ status: "queued", reason: "retry" as Run["reason"] }), "running"),
    ).toEqual([]);
    expect(logged(buildRun({ status: "queued", reason: "replica_lost" }), "launching")).toEqual([]);
  });
});

describe("a task's webhook secret and defect as its owner sees them", () => {
  const webhook = {
    kind: "webhook",
    url: "https://example.test/hook",
    method: "POST",
    headers: {},
    input: null,
    cancelUrl: null,
    idempotent: false,
  } as const;

  it("hands the receiver the stored secret, or its Standard Webhooks form", () => {
    expect(receiverSecret("abc_-123", "punctual")).toBe("abc_-123");
    expect(receiverSecret("abc_-123", "standard_webhooks")).toBe(`whsec_${btoa("abc_-123")}`);
    // A secret already in that form is handed as it is.
    expect(receiverSecret("whsec_QUJD", "standard_webhooks")).toBe("whsec_QUJD");
  });

  it("shows a webhook task's secret in its receiver's form, unless one server-wide secret signs", () => {
    const task = buildTask({
      target: { ...webhook, signature: "standard_webhooks" },
      webhookSecret: "s3cret",
    });
    expect(taskView(task).webhook_secret).toBe(`whsec_${btoa("s3cret")}`);
    expect(taskView({ ...task, target: webhook }).webhook_secret).toBe("s3cret");
    expect(taskView(task, false).webhook_secret).toBeNull();
    expect(taskView(buildTask({ webhookSecret: "s3cret" })).webhook_secret).toBeNull();
  });

  it("shows a defect with when it was found and each broken field", () => {
    const task = buildTask({
      defect: {
        detectedAt: instant(Date.UTC(2030, 0, 7, 9)),
        fields: [{ field: "schedule", message: "rules.0.hours: expected array" }],
      },
    });
    expect(taskView(task).defect).toEqual({
      detected_at: "2030-01-07T09:00:00Z",
      fields: [{ field: "schedule", message: "rules.0.hours: expected array" }],
    });
    expect(taskView(buildTask()).defect).toBeNull();
  });
});
