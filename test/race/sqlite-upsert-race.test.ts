/**
 * Four replicas (four processes, four connections to one SQLite file) upsert the same keys at the
 * same instant (docs/semantics.md#upsert): each key ends with exactly one task, created by one replica
 * and found identical by the others (no second version).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { ALL, T0 } from "../contract/fixtures.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-upsert-race");
const REPLICAS = 4;
const KEYS = 20;

afterAll(() => {
  files.remove();
});

const inputs = Array.from({ length: KEYS }, (_, i) => ({
  key: `declared:${i}`,
  title: `declared ${i}`,
  schedule: { type: "cron", cron: `${i} 9 * * *`, timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "log" },
}));

describe("SQLite upsert under 4 concurrent replicas", () => {
  it("ends with one task per key, created once and never re-versioned", async () => {
    const path = files.path("upsert");
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const outcomes = await runWorkers(
        Array.from({ length: REPLICAS }, () => ({ op: "upsert", path, now: T0, inputs })),
        { barrier: true },
      );
      const page = await store.tasks.listTasks(ALL, { limit: 200 });
      expect(page.items).toHaveLength(KEYS);
      expect(new Set(page.items.map((task) => task.key)).size).toBe(KEYS);
      expect(page.items.every((task) => task.version === 1)).toBe(true);
      for (let i = 0; i < KEYS; i++) {
        const answers = outcomes.map((outcome) => {
          if (outcome.op !== "upsert") throw new Error(`unexpected outcome ${outcome.op}`);
          return outcome.answers[i]!;
        });
        expect(answers.filter((answer) => answer.created)).toHaveLength(1);
        expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
      }
    } finally {
      await store.close();
    }
  });
});
