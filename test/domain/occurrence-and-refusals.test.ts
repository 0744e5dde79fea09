/**
 * An occurrence's jitter and idempotency key (docs/schedules.md#bounds-and-jitter, docs/semantics.md#launch),
 * the schedule engine's work budget (docs/security.md#bounded-work) and what a store call counts as a
 * refusal: judged by their promises (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import { LimitExceededError } from "../../src/domain/errors.js";
import {
  fnv1a,
  hashFraction,
  IDEMPOTENCY_KEY_MAX,
  idempotencyKeyFor,
  jitteredFireAt,
} from "../../src/domain/occurrence.js";
import { isRefusal } from "../../src/domain/ports/store.js";
import { spendWork, withWorkBudget } from "../../src/domain/schedule/work-budget.js";
import { durationMs } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { plus, SECOND, T0, TASK_ID } from "./builders.js";

describe("jitteredFireAt", () => {
  const fire = (jitter: number, nextNominal: Instant | null, scheduledFor: Instant = T0): Instant =>
    jitteredFireAt({ taskId: TASK_ID, scheduledFor, jitterMs: durationMs(jitter), nextNominal });

  it("fires on time without jitter", () => {
    expect(fire(0, null)).toBe(T0);
    expect(fire(0, plus(T0, SECOND))).toBe(T0);
  });

  it("adds whole seconds within the jitter, the same for the same occurrence", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const scheduledFor = plus(T0, i * 60 * SECOND);
      const at = fire(30 * SECOND + 999, null, scheduledFor);
      expect(at).toBe(fire(30 * SECOND + 999, null, scheduledFor));
      const offset = at - scheduledFor;
      expect(offset % SECOND).toBe(0);
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThanOrEqual(30 * SECOND);
      seen.add(offset);
    }
    // Spread over the window, not stuck at one end.
    expect(seen.size).toBeGreaterThan(20);
  });

  it("never reaches the next nominal time, keeping a second before it", () => {
    for (let i = 0; i < 100; i++) {
      const scheduledFor = plus(T0, i * 60 * SECOND);
      const next = plus(scheduledFor, 5 * SECOND);
      expect(fire(60 * SECOND, next, scheduledFor)).toBeLessThanOrEqual(next - SECOND);
    }
    // A next nominal time within a second leaves no room: the occurrence fires on time.
    expect(fire(60 * SECOND, plus(T0, 500))).toBe(T0);
  });

  it("hashes with FNV-1a (its published test vectors) into [0, 1)", () => {
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(fnv1a("foobar")).toBe(0xbf9cf968);
    expect(hashFraction("foobar")).toBeCloseTo(0xbf9cf968 / 2 ** 32, 12);
  });
});

describe("idempotencyKeyFor", () => {
  it("names the task, the trigger and the occurrence, and refuses a key longer than the limit", () => {
    expect(idempotencyKeyFor(TASK_ID, "scheduled", T0)).toBe(`punctual:task-1:scheduled:${T0}`);
    expect(idempotencyKeyFor(TASK_ID, "manual", "client-key")).toBe(
      "punctual:task-1:manual:client-key",
    );
    const room = IDEMPOTENCY_KEY_MAX - "punctual:task-1:manual:".length;
    expect(idempotencyKeyFor(TASK_ID, "manual", "k".repeat(room))).toHaveLength(
      IDEMPOTENCY_KEY_MAX,
    );
    expect(() => idempotencyKeyFor(TASK_ID, "manual", "k".repeat(room + 1))).toThrow(RangeError);
  });
});

describe("the work budget", () => {
  it("counts nothing outside a budget", () => {
    expect(() => {
      spendWork(Number.MAX_SAFE_INTEGER);
    }).not.toThrow();
  });

  it("lets work within the budget finish, and refuses the step that passes it, and every later one", () => {
    const done = withWorkBudget(() => {
      spendWork(60);
      spendWork(40);
      return "done";
    }, 100);
    expect(done).toBe("done");
    let later: unknown = null;
    const over = (): void => {
      withWorkBudget(() => {
        spendWork(100);
        try {
          spendWork(1);
        } catch (error) {
          try {
            spendWork(0);
          } catch (again) {
            later = again;
          }
          throw error;
        }
      }, 100);
    };
    expect(over).toThrow(LimitExceededError);
    expect(over).toThrow(/over 100 steps/);
    expect(later).toBeInstanceOf(LimitExceededError);
    // The scope ended with the throw: outside it nothing is counted again.
    expect(() => {
      spendWork(1_000);
    }).not.toThrow();
  });

  it("shares the outermost budget with nested scopes", () => {
    const nested = () =>
      withWorkBudget(() => {
        spendWork(80);
        return withWorkBudget(() => {
          spendWork(30);
          return "inner";
        }, 1_000);
      }, 100);
    expect(nested).toThrow(LimitExceededError);
  });
});

describe("isRefusal", () => {
  it("counts a programming error as a refusal, and asks the store about anything else", () => {
    expect(isRefusal({}, new RangeError("bad value"))).toBe(true);
    expect(isRefusal({}, new TypeError("bad type"))).toBe(true);
    expect(isRefusal({}, new Error("connection reset"))).toBe(false);
    const store = { refuses: (error: unknown) => error instanceof SyntaxError };
    expect(isRefusal(store, new SyntaxError("constraint"))).toBe(true);
    expect(isRefusal(store, new Error("connection reset"))).toBe(false);
  });
});
