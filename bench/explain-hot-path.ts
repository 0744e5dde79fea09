/**
 * `npx tsx bench/explain-hot-path.ts [--full] [--batch N]`: `EXPLAIN (ANALYZE, BUFFERS)` of every hot
 * statement of the PostgreSQL store (docs/storage.md#the-claim-path-on-postgresql) with 0, 10,000 and
 * 1,000,000 terminal runs in `runs`, on a schema as created and after `ANALYZE` of every table, as custom
 * and as generic plans. Prints a summary line per statement (execution time, shared buffers, sequential
 * scans of `runs` or `tasks`); `--full` prints every plan. Uses `PUNCTUAL_TEST_DATABASE_URL` (else the
 * local server) and drops the database it makes.
 */
import pg from "pg";
import { openPostgresStore } from "../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../src/adapters/storage/shared/time-ordered-id.js";
import { minute } from "../test/contract/fixtures.js";
import { runHotPath } from "../test/helpers/hot-path.js";
import { explainingPool, planFigures, seedHistory, sequentialScansOf } from "./lib/hot-plans.js";
import type { HotPlan } from "./lib/hot-plans.js";

const args = process.argv.slice(2);
const full = args.includes("--full");
const batchAt = args.indexOf("--batch");
const batch = batchAt >= 0 ? Number(args[batchAt + 1]) : 200;
const sizes = [0, 10_000, 1_000_000];
const admin =
  process.env.PUNCTUAL_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `punctual_explain_${process.pid}`;

async function main(): Promise<void> {
  const adminClient = new pg.Client({ connectionString: admin });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${database}`);
  const url = new URL(admin);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  const escape = (value: string): string => {
    const escaped = value.replaceAll("'", "''");
    return value.includes("\\") ? ` E'${escaped.replaceAll("\\", "\\\\")}'` : `'${escaped}'`;
  };
  const version = (await pool.query("SHOW server_version")).rows[0] as { server_version: string };
  console.log(`PostgreSQL ${version.server_version}; a batch of ${batch} once tasks per pass`);
  try {
    for (const size of sizes) {
      const schema = `explain_${size}`;
      const setup = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
      await seedHistory(pool, schema, size);
      await setup.close();
      for (const analyzed of [false, true]) {
        if (analyzed)
          await pool.query(
            `ANALYZE "${schema}".runs; ANALYZE "${schema}".tasks; ANALYZE "${schema}".claim_slots`,
          );
        const plans: HotPlan[] = [];
        const store = await openPostgresStore({
          newId: createIdGenerator(),
          pool: explainingPool(pool, plans, escape),
          schema,
        });
        await runHotPath(store, minute(analyzed ? 20 : 10), batch);
        await store.close();
        report(size, analyzed, plans);
      }
    }
  } finally {
    await pool.end();
    await adminClient.query(`DROP DATABASE ${database}`);
    await adminClient.end();
  }
}

function report(size: number, analyzed: boolean, plans: readonly HotPlan[]): void {
  console.log(
    `\n### ${size.toLocaleString("en-US")} terminal runs, ${analyzed ? "after ANALYZE" : "as created"}\n`,
  );
  console.log(
    "| statement | custom ms | custom buffers | generic ms | generic buffers | seq scans of runs/tasks |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | --- |");
  for (const plan of plans) {
    const c = planFigures(plan.custom);
    const g = planFigures(plan.generic);
    const scans = [plan.custom, plan.generic].flatMap((p) => [
      ...sequentialScansOf(p, "runs"),
      ...sequentialScansOf(p, "tasks"),
    ]);
    console.log(
      `| ${plan.label} | ${c.ms.toFixed(2)} | ${c.buffers} | ${g.ms.toFixed(2)} | ${g.buffers} | ${scans.length === 0 ? "none" : [...new Set(scans.map((s) => s.trim()))].join("; ")} |`,
    );
  }
  if (full) {
    for (const plan of plans) {
      console.log(`\n#### ${plan.label} (custom)\n\n\`\`\`\n${plan.custom}\n\`\`\``);
      console.log(`\n#### ${plan.label} (generic)\n\n\`\`\`\n${plan.generic}\n\`\`\``);
    }
  }
}

await main();
