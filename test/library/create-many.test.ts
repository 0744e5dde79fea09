/**
 * `scheduler.tasks.createMany` through the public library (docs/semantics.md#bulk-create) on a
 * SQLite file and on PostgreSQL (the server, or PGlite where none runs): 10,000 reminders in chunks of
 * 1,000 land exactly once, in input order, and a chunk with one bad item writes none of its tasks. The time is printed, never
 * asserted (bench/ measures speed).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler, sqlite } from "../../src/index.js";
import { openPostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { Scheduler, StoreFactory } from "../../src/index.js";
import { ValidationError } from "../../src/domain/errors.js";
import { createPostgresTestDatabase } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const TOTAL = 10_000;
const CHUNK = 1_000;

function reminder(i: number, runAt: string) {
  return {
    title: `reminder ${String(i)}`,
    schedule: { type: "once", run_at: runAt },
    target: { kind: "handler", name: "remind", input: { n: i } },
  } as const;
}

let dir: string;
let pg: PostgresTestDatabase;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "punctual-create-many-"));
  pg = await createPostgresTestDatabase();
});
afterAll(async () => {
  await pg.drop();
  rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => StoreFactory][] = [
  ["sqlite", () => sqlite(join(dir, "many.db"))],
  // On the test database's own pool: the server's, or PGlite's one connection where no server runs.
  [
    "postgres",
    () => ({
      open: (options) =>
        openPostgresStore({ ...options, pool: pg.pool(), schema: pg.freshSchema() }),
    }),
  ],
];

async function countTasks(scheduler: Scheduler): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await scheduler.tasks.list({ limit: 200, ...(cursor ? { cursor } : {}) });
    count += page.items.length;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return count;
}

describe.each(stores)("tasks.createMany on %s", (name, factory) => {
  it("creates 10,000 tasks in chunks of 1,000, each once and in input order", async () => {
    const store = factory();
    const scheduler = createScheduler({ store, handlers: { remind: () => Promise.resolve() } });
    try {
      const runAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000).toISOString();
      const inputs = Array.from({ length: TOTAL }, (_, i) => reminder(i, runAt));
      const started = performance.now();
      const ids: string[] = [];
      for (let start = 0; start < TOTAL; start += CHUNK) {
        const created = await scheduler.tasks.createMany(inputs.slice(start, start + CHUNK));
        expect(created.map((c) => c.task.title)).toEqual(
          inputs.slice(start, start + CHUNK).map((input) => input.title),
        );
        ids.push(...created.map((c) => c.task.id));
      }
      const ms = performance.now() - started;
      console.log(`[create-many] ${name}: ${String(TOTAL)} tasks in ${ms.toFixed(0)} ms`);
      expect(new Set(ids).size).toBe(TOTAL);
      expect(await countTasks(scheduler)).toBe(TOTAL);
      const last = await scheduler.tasks.get(ids.at(-1) ?? "");
      expect(last.title).toBe(`reminder ${String(TOTAL - 1)}`);

      const bad = [reminder(0, runAt), { ...reminder(1, runAt), schedule: { type: "once" } }];
      const refusal = scheduler.tasks.createMany(bad);
      await expect(refusal).rejects.toBeInstanceOf(ValidationError);
      await expect(refusal).rejects.toMatchObject({
        errors: [expect.objectContaining({ field: "tasks[1].schedule.run_at" })],
      });
      expect(await countTasks(scheduler)).toBe(TOTAL);
    } finally {
      await scheduler.stop();
    }
  }, 120_000);
});
