/**
 * Small application modules judged by what they promise (issue 36 item 7): the fleet budget a replica
 * adopts from the store, the "did you mean" of unknown options, and the silent logger and tracer that
 * stand in when none is given.
 */
import { describe, expect, it } from "vitest";
import { BudgetHolder } from "../../src/application/dispatch/budget-holder.js";
import { silentLogger } from "../../src/application/events/logger.js";
import { NO_SPAN, NO_TRACING, startSpanLazily } from "../../src/application/events/tracing.js";
import type { TraceSpan, Tracer } from "../../src/application/events/tracing.js";
import {
  closestKey,
  refuseUnknownOptions,
  unknownOptions,
} from "../../src/application/policy/known-options.js";
import { ValidationError } from "../../src/domain/errors.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import type { SchedulePolicy } from "../../src/domain/options.js";

function fleet(stored: number | null | undefined) {
  return {
    fleet:
      stored === undefined
        ? undefined
        : {
            storedBudget: () => Promise.resolve(stored),
            adoptBudget: () => Promise.reject(new Error("not asked")),
            replaceBudget: () => Promise.reject(new Error("not asked")),
          },
  } as never;
}

describe("BudgetHolder", () => {
  const policy: SchedulePolicy = { ...DEFAULT_POLICY, maxConcurrentRuns: 10 };

  it("keeps its policy while the store holds no budget, the same one, or has no fleet settings", async () => {
    for (const stored of [null, 10, undefined]) {
      const holder = new BudgetHolder(fleet(stored), policy);
      expect(await holder.refreshBudget(), String(stored)).toBeNull();
      expect(holder.policy).toBe(policy);
    }
  });

  it("adopts the budget the fleet stores, and says from what to what", async () => {
    const holder = new BudgetHolder(fleet(40), policy);
    expect(await holder.refreshBudget()).toEqual({ from: 10, to: 40 });
    expect(holder.policy.maxConcurrentRuns).toBe(40);
    // Adopted once: the next refresh finds nothing new.
    expect(await holder.refreshBudget()).toBeNull();
  });

  it("moves an owners' share given as a fraction of the budget with it", async () => {
    const shared: SchedulePolicy = {
      ...policy,
      ownerShare: { maxActiveRuns: 5, overrides: new Map(), fractionOfBudget: 0.5 },
    };
    const holder = new BudgetHolder(fleet(40), shared);
    expect(await holder.refreshBudget()).toEqual({ from: 10, to: 40, maxActiveRunsPerOwner: 20 });
    expect(holder.policy.ownerShare?.maxActiveRuns).toBe(20);
  });
});

describe("unknown options", () => {
  const known = ["max_concurrent_runs", "lease_seconds", "retention"];

  it("suggests the closest known option, ignoring case, dashes and underscores", () => {
    expect(closestKey("MaxConcurrentRuns", known)).toBe("max_concurrent_runs");
    expect(closestKey("lease-secnds", known)).toBe("lease_seconds");
    expect(closestKey("colour", known)).toBeUndefined();
  });

  it("names each unknown key under its path, with a suggestion or the known list", () => {
    expect(unknownOptions(null, known)).toEqual([]);
    expect(unknownOptions("text", known)).toEqual([]);
    expect(unknownOptions({ retention: 1 }, known)).toEqual([]);
    expect(unknownOptions({ retension: 1, colour: "red" }, known, "policy")).toEqual([
      { field: "policy.retension", message: "unknown option; did you mean retention?" },
      {
        field: "policy.colour",
        message: "unknown option (known: max_concurrent_runs, lease_seconds, retention)",
      },
    ]);
    expect(unknownOptions({ colour: 1 }, known)[0]?.field).toBe("colour");
  });

  it("refuses the errors found, and nothing when none were", () => {
    expect(() => {
      refuseUnknownOptions([]);
    }).not.toThrow();
    expect(() => {
      refuseUnknownOptions([{ field: "x", message: "unknown option" }]);
    }).toThrow(ValidationError);
  });
});

describe("the silent stand-ins", () => {
  it("log nothing and trace nothing, adding no headers to a launch", () => {
    for (const level of ["debug", "info", "warn", "error"] as const) {
      expect(() => {
        silentLogger[level]({ a: 1 }, "message");
      }).not.toThrow();
    }
    expect(Object.isFrozen(silentLogger)).toBe(true);
    const span = NO_TRACING.startSpan("launch", { run_id: "r" });
    expect(span.headers).toEqual({});
    expect(() => {
      span.setAttributes({ a: 1 });
      span.fail("boom");
      span.end();
    }).not.toThrow();
    expect(span.headers).toEqual({});
    expect(NO_TRACING.startSpan("other", {}, { parent: span })).toBe(span);
  });

  it("makes a span's attributes only when its tracer records, and always when it cannot say", () => {
    const started: string[] = [];
    const recorded: TraceSpan = { ...NO_SPAN, headers: { traceparent: "00-x" } };
    const tracer = (recording?: boolean): Tracer => ({
      ...(recording === undefined ? {} : { recording: () => recording }),
      startSpan: (name, attributes) => {
        started.push(`${name} ${JSON.stringify(attributes)}`);
        return recorded;
      },
    });
    let made = 0;
    const attributes = () => {
      made++;
      return { runs: 3 };
    };
    expect(startSpanLazily(tracer(false), "punctual.claim", attributes)).toBe(NO_SPAN);
    expect(made).toBe(0);
    expect(startSpanLazily(tracer(true), "punctual.claim", attributes)).toBe(recorded);
    expect(startSpanLazily(tracer(), "punctual.admission", attributes)).toBe(recorded);
    expect(made).toBe(2);
    expect(started).toEqual(['punctual.claim {"runs":3}', 'punctual.admission {"runs":3}']);
  });
});
