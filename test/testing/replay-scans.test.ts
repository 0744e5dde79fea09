/**
 * How a replay's cost grows, told by counting rather than timing: the memory store counts the rows its
 * scans and index walks hand out, so a step that starts reading the whole ledger (or every run of a task
 * per page) shows up as a count that grows with the history.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createTestScheduler } from "../../src/testing.js";
import type { TestScheduler } from "../../src/testing.js";

async function memoryStoreOf(scheduler: TestScheduler): Promise<MemoryStore> {
  const { store } = await scheduler.runtime();
  if (!(store instanceof MemoryStore)) throw new Error("expected the memory store");
  return store;
}

/** Rows scanned while `step` runs. */
async function scannedDuring(store: MemoryStore, step: () => Promise<unknown>): Promise<number> {
  const before = store.rowsScanned;
  await step();
  return store.rowsScanned - before;
}

describe("createTestScheduler", () => {
  it("scans as many rows for a week of fires in April as in January, whatever the ledger holds", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
    const store = await memoryStoreOf(scheduler);
    await scheduler.tasks.create({
      title: "hourly",
      schedule: { type: "cron", cron: "0 * * * *", timezone: "Europe/Berlin" },
      target: { kind: "handler", name: "log" },
    });
    await scheduler.advanceTo("2026-01-05T00:00:00Z");
    // Two weeks without a DST change, the second with about 2,200 more runs in the ledger.
    const early = await scannedDuring(store, () => scheduler.advanceTo("2026-01-12T00:00:00Z"));
    await scheduler.advanceTo("2026-04-06T00:00:00Z");
    const late = await scannedDuring(store, () => scheduler.advanceTo("2026-04-13T00:00:00Z"));
    expect(early).toBeGreaterThan(0);
    expect(late).toBe(early);
    await scheduler.stop();
  });

  it("reads a ledger page by page in rows proportional to the ledger, not to its square", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
    const store = await memoryStoreOf(scheduler);
    const { task } = await scheduler.tasks.create({
      title: "every ten minutes",
      schedule: { type: "cron", cron: "*/10 * * * *" },
      target: { kind: "handler", name: "log" },
    });
    await scheduler.advanceTo("2026-02-01T00:00:00Z");
    let runs = 0;
    const scanned = await scannedDuring(store, async () => {
      runs = (await scheduler.ledger(task.id)).length;
    });
    expect(runs).toBe(31 * 144);
    // Each 200-run page walks its rows plus one, to know whether another page follows.
    expect(scanned).toBeLessThanOrEqual(runs + Math.ceil(runs / 200));
    await scheduler.stop();
  });
});
