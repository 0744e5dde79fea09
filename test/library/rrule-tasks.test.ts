/**
 * rrule schedules through the public library on SQLite and PostgreSQL (docs/schedules.md#recurrence-rules-rfc-5545):
 * created with DST warnings, stored and read back as written (the schedule type migrations admit it),
 * its next run where the engine puts it, and an edit that keeps the stored bounds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler, nextOccurrences, sqlite } from "../../src/index.js";
import { openPostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { StoreFactory } from "../../src/index.js";
import { createPostgresTestDatabase } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

let dir: string;
let pg: PostgresTestDatabase;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "punctual-rrule-"));
  pg = await createPostgresTestDatabase();
});
afterAll(async () => {
  await pg.drop();
  rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => StoreFactory][] = [
  ["sqlite", () => sqlite(join(dir, "rrule.db"))],
  [
    "postgres",
    () => ({
      open: (options) =>
        openPostgresStore({ ...options, pool: pg.pool(), schema: pg.freshSchema() }),
    }),
  ],
];

/** Every Sunday at 02:30 in New York from next year on: the spring-forward Sunday moves it to 03:30. */
function rule(): string {
  const year = new Date().getUTCFullYear() + 1;
  return `DTSTART;TZID=America/New_York:${String(year)}0101T023000\nRRULE:FREQ=DAILY;BYDAY=SU`;
}

describe.each(stores)("rrule tasks on %s", (_name, factory) => {
  it("are created with DST warnings, read back as written, and edited keeping their bounds", async () => {
    const scheduler = createScheduler({
      store: factory(),
      handlers: { log: () => Promise.resolve() },
    });
    try {
      const text = rule();
      const endAt = `${String(new Date().getUTCFullYear() + 5)}-01-01T00:00:00Z`;
      const created = await scheduler.tasks.create({
        title: "Sunday 02:30",
        schedule: { type: "rrule", rrule: text, end_at: endAt },
        target: { kind: "handler", name: "log" },
      });
      expect(created.warnings.some((w) => /does not exist and runs at 03:30/.test(w))).toBe(true);
      const read = await scheduler.tasks.get(created.task.id);
      expect(read.schedule).toEqual({ type: "rrule", rrule: text, end_at: endAt });
      const [first] = nextOccurrences(
        { type: "rrule", rrule: text },
        { after: new Date(), count: 1 },
      );
      expect(read.next_run_at).toBe(first?.toISOString().replace(".000", ""));

      const weekly = text.replace("FREQ=DAILY;BYDAY=SU", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO");
      const edited = await scheduler.tasks.update(created.task.id, {
        schedule: { type: "rrule", rrule: weekly },
      });
      expect(edited.task.schedule).toEqual({ type: "rrule", rrule: weekly, end_at: endAt });
    } finally {
      await scheduler.stop();
    }
  }, 60_000);
});
