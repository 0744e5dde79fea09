import { describe, expect, it } from "vitest";
import { agreeBudget } from "../../src/application/policy/fleet-budget.js";
import type { Store } from "../../src/domain/ports/store.js";
import { MemoryFleetSettings } from "../../src/adapters/storage/memory/memory-fleet-settings.js";
import { instant } from "../../src/domain/time.js";

interface Logged {
  readonly level: "info" | "warn";
  readonly fields: unknown;
  readonly msg: string;
}

function fleet(): {
  store: Store;
  log: Logged[];
  logger: Parameters<typeof agreeBudget>[0]["log"];
} {
  const log: Logged[] = [];
  const record = (level: Logged["level"]) => (fields: unknown, msg: string) => {
    log.push({ level, fields, msg });
  };
  const logger = {
    info: record("info"),
    warn: record("warn"),
    error: () => undefined,
    debug: () => undefined,
  } as unknown as Parameters<typeof agreeBudget>[0]["log"];
  return { store: { fleet: new MemoryFleetSettings() } as unknown as Store, log, logger };
}

const now = instant(0);

describe("agreeBudget", () => {
  it("stores the first replica's budget and lets a later one without a budget adopt it", async () => {
    const { store, logger, log } = fleet();
    expect(await agreeBudget({ store, requested: 16, explicit: false, now, log: logger })).toBe(16);
    await store.fleet?.replaceBudget(40, now);
    expect(await agreeBudget({ store, requested: 16, explicit: false, now, log: logger })).toBe(40);
    expect(log.map((l) => l.level)).toEqual(["info"]);
  });

  it("sets the fleet's budget from one given explicitly, logged with the one it replaces", async () => {
    const { store, logger, log } = fleet();
    await agreeBudget({ store, requested: 16, explicit: false, now, log: logger });
    expect(await agreeBudget({ store, requested: 1000, explicit: true, now, log: logger })).toBe(
      1000,
    );
    expect(await store.fleet?.storedBudget()).toBe(1000);
    expect(log).toEqual([
      expect.objectContaining({ level: "warn", fields: { from: 16, to: 1000 } }),
    ]);
  });

  it("says nothing when the explicit budget is the stored one", async () => {
    const { store, logger, log } = fleet();
    await agreeBudget({ store, requested: 8, explicit: true, now, log: logger });
    await agreeBudget({ store, requested: 8, explicit: true, now, log: logger });
    expect(log).toEqual([]);
  });
});
