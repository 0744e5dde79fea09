/**
 * Options that cannot be misspelled silently (docs/library.md#options-are-checked): `createScheduler`,
 * `createServer` and the policy refuse a key they do not know at once, naming the closest known one.
 */
import { describe, expect, it } from "vitest";
import { createScheduler } from "../../src/composition.js";
import { createServer } from "../../src/composition-server.js";
import { buildPolicy } from "../../src/application/policy/policy-options.js";
import type { PolicyOptions } from "../../src/application/policy/policy-options.js";
import { closestKey } from "../../src/application/policy/known-options.js";
import { memoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { ValidationError } from "../../src/domain/errors.js";
import type { CreateSchedulerOptions } from "../../src/composition.js";
import type { ServerOptions } from "../../src/composition-server.js";

function refusal(act: () => unknown): ValidationError {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("not refused");
}

describe("option names", () => {
  it("refuses the snake_case spelling of a policy key and names the camelCase one", () => {
    const error = refusal(() =>
      createScheduler({
        store: memoryStore(),
        policy: { max_concurrent_runs: 1000 } as unknown as PolicyOptions,
      }),
    );
    expect(error.errors).toEqual([
      {
        field: "policy.max_concurrent_runs",
        message: "unknown option; did you mean maxConcurrentRuns?",
      },
    ]);
    expect(error.message).toBe(
      "policy.max_concurrent_runs: unknown option; did you mean maxConcurrentRuns?",
    );
  });

  it("refuses a misspelled top-level, coordinator and quota key in one error", () => {
    const error = refusal(() =>
      createScheduler({
        store: memoryStore(),
        handler: {},
        coordinator: { tickms: 5 },
        policy: { quotas: { runsPerMinut: 5, overrides: { ann: { taskPerOwner: 1 } } } },
      } as unknown as CreateSchedulerOptions),
    );
    expect(error.errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      "handler: unknown option; did you mean handlers?",
      "coordinator.tickms: unknown option; did you mean tickMs?",
      "policy.quotas.runsPerMinut: unknown option; did you mean runsPerMinute?",
      "policy.quotas.overrides.ann.taskPerOwner: unknown option; did you mean tasksPerOwner?",
    ]);
  });

  it("lists the known keys when none is close", () => {
    const error = refusal(() => buildPolicy({ banana: 1 } as unknown as PolicyOptions));
    expect(error.errors[0]?.message).toMatch(/^unknown option \(known: maxConcurrentRuns, /);
  });

  it("refuses an unknown createServer option before opening anything", async () => {
    await expect(
      createServer({ store: memoryStore(), prot: 0 } as unknown as ServerOptions),
    ).rejects.toThrow("prot: unknown option; did you mean port?");
  });

  it("accepts every documented key", () => {
    expect(() =>
      createScheduler({
        store: memoryStore(),
        handlers: {},
        policy: { maxConcurrentRuns: 4, quotas: { overrides: { ann: { tasksPerOwner: 1 } } } },
        coordinator: { tickMs: 100 },
        watcher: { intervalMs: 100 },
        schedulesGroup: "g",
      }),
    ).not.toThrow();
  });

  it("suggests only names close enough to be a misspelling", () => {
    expect(closestKey("leaseSecs", ["leaseSeconds", "maxConcurrentRuns"])).toBe("leaseSeconds");
    expect(closestKey("color", ["leaseSeconds", "maxConcurrentRuns"])).toBeUndefined();
  });
});
