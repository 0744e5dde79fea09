/**
 * `npx tsx bench/trigger-cost.ts [runs] [older]`: what `runs_moved` costs a verdict batch (docs/benchmarks.md), on
 * a schema left at `older` (default 32) and on one migrated to the newest, in turn: N runs claimed, then one statement ending
 * them all (`EXPLAIN ANALYZE`, rolled back) three times on one new connection. The first call in a backend
 * includes the function's compilation and the planning of each statement it runs; the others show its
 * execution alone. Prints the trigger's time and the statement's, in milliseconds. Uses
 * `PUNCTUAL_TEST_DATABASE_URL` (a scratch database is created and dropped).
 */
import pg from "pg";
import { handlerTarget, minute, onceAt } from "../test/contract/fixtures.js";
import { admitDue, claimDue, insertTasks } from "../test/contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../test/helpers/postgres.js";

const N = Number(process.argv[2] ?? 250);
const OLDER = Number(process.argv[3] ?? 32);
const database = await createPostgresTestDatabase();
try {
  for (const newest of [false, true, false, true]) {
    const older = await schemaAtVersion(database, OLDER);
    if (newest) await older.migrate();
    const { store, quoted } = older;
    const fixtures = Array.from({ length: N }, () => ({
      target: handlerTarget("work"),
      schedule: onceAt(minute(1)),
    }));
    await insertTasks(store, ...fixtures);
    await admitDue(store, minute(1), N);
    const claimed = await claimDue(store, minute(2), {
      handlerNames: new Set(["work"]),
      limit: N,
      maxConcurrentRuns: N,
    });
    const times: string[] = [];
    const client = new pg.Client({ connectionString: database.url ?? "" });
    await client.connect();
    for (let i = 0; i < 3; i++) {
      await client.query("BEGIN");
      const plan = await client.query(
        `EXPLAIN (ANALYZE) UPDATE ${quoted}.runs SET status = 'succeeded', finished_at = now() WHERE status = 'launching'`,
      );
      await client.query("ROLLBACK");
      const text = plan.rows
        .map((r) => String((r as Record<string, unknown>)["QUERY PLAN"]))
        .join("\n");
      times.push(
        (/Trigger runs_moved: time=([\d.]+)/.exec(text)?.[1] ?? "?") +
          "/" +
          (/Execution Time: ([\d.]+)/.exec(text)?.[1] ?? "?"),
      );
    }
    await client.end();
    console.log(
      `schema ${newest ? "newest" : OLDER}: ${claimed.length} runs; runs_moved ms / statement ms (cold, warm, warm): ${times.join(", ")}`,
    );
    await store.close();
  }
} finally {
  await database.drop();
}
