/**
 * Plans made while `runs` looked empty (docs/storage.md#the-run-model-on-postgresql): a fresh database's
 * migration analyses `runs` while it holds nothing, and a prepared statement keeps the plan it made then
 * until the table is analysed again. The reads that find the active runs through the budget's slots (next
 * wake-up, queue statistics, the sweeps) must not have become a scan of `runs` per slot in such a plan:
 * with 100,000 runs copied in before autovacuum's next analysis, one next wake-up ran 9.4 s that way in
 * the bench's history variant. Here the store's only connection prepares the statements on the empty
 * table, runs arrive without an analysis, and the cached plans are run with EXPLAIN ANALYZE: no node may
 * read `runs` more than once. The same holds of the reads of runs by a list of ids on the hot path (the
 * claim's lock of its chosen runs, the fenced write's read): a lookup per id in such a plan read `runs`
 * whole once per id. A structural check, not a timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { labelOf, seedHistory } from "../../../../bench/lib/hot-plans.js";
import { minute } from "../../../contract/fixtures.js";
import { runHotPath } from "../../../helpers/hot-path.js";
import { instant } from "../../../../src/domain/time.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe.skipIf(database.kind !== "server")("plans prepared while runs was empty", () => {
  it("read runs once per call, not once per budget slot", { timeout: 120_000 }, async () => {
    const schema = database.freshSchema();
    const connection = database.pool(1);
    const store = await openPostgresStore({ newId: createIdGenerator(), pool: connection, schema });
    try {
      const seeding = database.pool(1);
      // No analysis may come between the plans and the check.
      await seeding.query(`ALTER TABLE "${schema}".runs SET (autovacuum_enabled = false)`);
      const now = instant(Date.now());
      await store.runs.nextRunWakeAt();
      await store.runs.queueStats(now);
      await store.runs.findPastDeadline(now, 10);
      await seedHistory(seeding, schema, 20_000);
      const statements = await connection.query(
        "SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE '%claim_slots%'" +
          " AND (statement LIKE '%min(not_before)%' OR statement LIKE '%count(*)%'" +
          " OR statement LIKE '%deadline_at <%')",
      );
      expect(statements.rows.length).toBe(3);
      for (const row of statements.rows as { name: string; statement: string }[]) {
        const params = row.statement.includes("$2")
          ? `(${now}, 10)`
          : row.statement.includes("$1")
            ? `(${now})`
            : "";
        const plan = await connection.query(
          `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "${row.name}"${params}`,
        );
        const lines = (plan.rows as Record<string, string>[]).map((r) => Object.values(r)[0] ?? "");
        const readsOfRuns = lines.filter((line) => / on runs\b/.test(line));
        expect(readsOfRuns.length, lines.join("\n")).toBeGreaterThan(0);
        for (const line of readsOfRuns) expect(line, lines.join("\n")).toMatch(/loops=1\)/);
      }
    } finally {
      await store.close();
    }
  });

  it(
    "read runs once per call to lock a claim's chosen runs and to read a fenced write's runs",
    { timeout: 120_000 },
    async () => {
      const schema = database.freshSchema();
      const connection = database.pool(1);
      const store = await openPostgresStore({
        newId: createIdGenerator(),
        pool: connection,
        schema,
      });
      try {
        const seeding = database.pool(1);
        await seeding.query(`ALTER TABLE "${schema}".runs SET (autovacuum_enabled = false)`);
        // A named statement switches to its generic plan after five calls; here at once, while `runs`
        // holds only the hot path's own few runs.
        await connection.query("SET plan_cache_mode = force_generic_plan");
        await runHotPath(store, minute(10), 4);
        await seedHistory(seeding, schema, 20_000);
        const prepared = (
          await connection.query("SELECT name, statement FROM pg_prepared_statements")
        ).rows as { name: string; statement: string }[];
        // Fifty runs that arrived after the plans (seedHistory's ids).
        const ids = Array.from({ length: 50 }, (_, i) => `h${String(i + 1).padStart(9, "0")}`);
        for (const label of ["claim: lock chosen runs", "batch: read runs and tasks"]) {
          const statements = prepared.filter((row) => labelOf(row.statement) === label);
          expect(statements.length, label).toBe(1);
          const name = statements[0]?.name ?? "";
          const plan = await connection.query(
            `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "${name}"('{${ids.join(",")}}')`,
          );
          const lines = (plan.rows as Record<string, string>[]).map(
            (r) => Object.values(r)[0] ?? "",
          );
          const readsOfRuns = lines.filter((line) => / on runs\b/.test(line));
          expect(readsOfRuns.length, `${label}\n${lines.join("\n")}`).toBeGreaterThan(0);
          for (const line of readsOfRuns) {
            expect(line, `${label}\n${lines.join("\n")}`).toMatch(/loops=1\)/);
          }
        }
      } finally {
        await store.close();
      }
    },
  );
});
