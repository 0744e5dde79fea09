/**
 * `npx tsx bench/retention.ts [--runs N] [--burst N] [--catch-up-minutes M] [--postgres URL]`
 * (docs/scaling.md#retention): how retention behaves on PostgreSQL with a large backlog of finished runs
 * older than the retention, while bursts run. Needs the build (`npm run build`).
 *
 * 1. A fresh database; 500 once tasks run through the library, so that every field of a finished run is
 *    what punctual itself wrote; each of those runs is then copied in SQL (columns read from the catalogue,
 *    fresh time-ordered ids, every timestamp moved 40 days back and one second further per copy) until
 *    `runs` holds `--runs` finished runs past the default retention (30 days), its secondary indexes
 *    dropped meanwhile and built again after; `VACUUM (ANALYZE)`.
 * 2. The baseline: two `punctual worker` processes with a retention of ten years (no purge) fire a burst
 *    of `--burst` once tasks due together, and stop.
 *    Then two workers (default retention and sweep period) start deleting the backlog.
 *    Their `retention deleted a backlog of finished runs` lines say what each round deleted.
 * 3. Measured: the purge rate and the WAL per deleted run with nothing else running (30 s), then a burst of
 *    `--burst` once tasks due together while the purge goes on (fires/s, first launch to last verdict),
 *    then the purge to its end (or `--catch-up-minutes`), then the same burst with no backlog left.
 * Prints a markdown table; the database is dropped at the end.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { option } from "./lib/argv-option.js";
import { createScheduler } from "../src/composition.js";
import { storeFromDatabaseUrl } from "../src/composition-stores.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "punctual.js");

const RUNS = Number(option("runs", "10000000"));
const BURST = Number(option("burst", "10000"));
const RETENTION_OFF = "P3650D";
const CATCH_UP_MS = Number(option("catch-up-minutes", "30")) * 60_000;
const ADMIN_URL = option(
  "postgres",
  process.env.PUNCTUAL_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
);
const TEMPLATES = 500;
const ROWS_PER_STATEMENT = 200_000;
const TERMINAL = "('succeeded', 'failed', 'timed_out', 'cancelled', 'skipped', 'missed')";

const HANDLERS = `export default { noop: async () => {} };\n`;

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
}

function note(message: string): void {
  console.error(`[retention ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

async function scalar(db: pg.Client, sql: string, params: unknown[] = []): Promise<number> {
  const result = await db.query<{ v: string | number | null }>(sql, params);
  return Number(result.rows[0]?.v ?? 0);
}

async function walLsn(db: pg.Client): Promise<string> {
  const result = await db.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
  return result.rows[0]?.lsn ?? "0/0";
}

async function walSince(db: pg.Client, lsn: string): Promise<number> {
  return scalar(db, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS v", [lsn]);
}

/** Once tasks due together on the `noop` handler; resolves with their ids and the due instant. */
async function createBurst(
  url: string,
  count: number,
  title: string,
): Promise<{ ids: string[]; dueAt: number }> {
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(url),
    handlers: { noop: () => Promise.resolve() },
  });
  try {
    const dueAt = Math.ceil((Date.now() + 5_000 + count) / 1000) * 1000;
    const schedule = { type: "once", run_at: new Date(dueAt).toISOString() };
    const ids: string[] = [];
    for (let from = 0; from < count; from += 1000) {
      const inputs = Array.from({ length: Math.min(1000, count - from) }, () => ({
        title,
        schedule,
        target: { kind: "handler", name: "noop" },
      }));
      for (const created of await scheduler.tasks.createMany(inputs)) ids.push(created.task.id);
    }
    return { ids, dueAt };
  } finally {
    await scheduler.stop();
  }
}

/** Waits until every run of the burst's tasks is finished; fires/s from first launch to last finish. */
async function burstRate(db: pg.Client, ids: readonly string[]): Promise<number> {
  await waitFor(
    async () =>
      (await scalar(
        db,
        `SELECT count(*) AS v FROM punctual.runs WHERE task_id = ANY($1::text[]) AND status IN ${TERMINAL}`,
        [ids],
      )) >= ids.length,
    600_000,
    "the burst to finish",
  );
  const spanMs = await scalar(
    db,
    `SELECT extract(epoch FROM max(finished_at) - min(launched_at)) * 1000 AS v
       FROM punctual.runs WHERE task_id = ANY($1::text[])`,
    [ids],
  );
  return spanMs > 0 ? ids.length / (spanMs / 1000) : Number.NaN;
}

/** The replicas' retention lines: rounds that deleted a backlog, and what they deleted. */
class PurgeLog {
  purged = 0;
  rounds = 0;
  readonly #buffers = new Map<ChildProcess, string>();

  watch(child: ChildProcess): void {
    this.#buffers.set(child, "");
    child.stdout?.on("data", (chunk: Buffer) => {
      const text = (this.#buffers.get(child) ?? "") + chunk.toString("utf8");
      const lines = text.split("\n");
      this.#buffers.set(child, lines.pop() ?? "");
      for (const line of lines) {
        if (!line.includes("retention deleted a backlog")) continue;
        const entry = JSON.parse(line) as { purged: number };
        this.purged += entry.purged;
        this.rounds += 1;
      }
    });
  }
}

/** Two `punctual worker` processes on the database, deleting finished runs older than `retention`. */
function startReplicas(dir: string, url: string, retention: string, log: PurgeLog): ChildProcess[] {
  return [0, 1].map(() => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        "worker",
        "--handlers",
        join(dir, "handlers.js"),
        "--database",
        url,
        "--retention",
        retention,
      ],
      {
        cwd: dir,
        env: { ...process.env, PUNCTUAL_MAX_CONCURRENT_RUNS: "500" },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    log.watch(child);
    return child;
  });
}

async function stopReplicas(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await Promise.all(
    children.map((child) =>
      child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once("exit", r)),
    ),
  );
}

async function seed(db: pg.Client, url: string): Promise<void> {
  note(`running ${String(TEMPLATES)} template tasks through the library`);
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(url),
    handlers: { noop: () => Promise.resolve() },
  });
  const { ids } = await createBurst(url, TEMPLATES, "template");
  await scheduler.start();
  await waitFor(
    async () =>
      (await scalar(
        db,
        `SELECT count(*) AS v FROM punctual.runs WHERE task_id = ANY($1::text[]) AND status IN ${TERMINAL}`,
        [ids],
      )) >= TEMPLATES,
    120_000,
    "the template runs to finish",
  );
  await scheduler.stop();
  const columns = (
    await db.query<{ name: string; type: string }>(
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns
        WHERE table_schema = 'punctual' AND table_name = 'runs' ORDER BY ordinal_position`,
    )
  ).rows;
  const names = columns.map((c) => c.name).join(", ");
  // The template runs, fixed before the first copy: copies belong to the same tasks.
  const templates = (
    await db.query<{ id: string }>("SELECT id FROM punctual.runs WHERE task_id = ANY($1::text[])", [
      ids,
    ])
  ).rows.map((r) => r.id);
  const expressions = columns.map(({ name, type }) => {
    if (name === "id") {
      return `(substr(s.hex, 1, 8) || '-' || substr(s.hex, 9, 4) || '-7' || substr(s.rnd, 1, 3) || '-8' ||
        substr(s.rnd, 4, 3) || '-' || substr(s.rnd, 7, 12))`;
    }
    if (name === "idempotency_key") return `(t.idempotency_key || ':' || g.k::text)`;
    if (type === "timestamp with time zone") return `t.${name} - s.shift`;
    return `t.${name}`;
  });
  // The secondary indexes are dropped while the copies go in and built again after (a sort each,
  // many times faster than 10,000,000 insertions into each of them); the primary key stays.
  const indexes = (
    await db.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = 'punctual' AND tablename = 'runs' AND indexname <> 'runs_pkey'`,
    )
  ).rows;
  for (const { name } of indexes) await db.query(`DROP INDEX punctual.${name}`);
  const copies = Math.ceil(RUNS / TEMPLATES);
  const perStatement = Math.max(1, Math.floor(ROWS_PER_STATEMENT / TEMPLATES));
  const startedAt = Date.now();
  for (let from = 0; from < copies; from += perStatement) {
    const to = Math.min(copies, from + perStatement);
    await db.query(
      `INSERT INTO punctual.runs (${names})
       SELECT ${expressions.join(", ")}
         FROM punctual.runs AS t
         CROSS JOIN generate_series($2::int, $3::int - 1) AS g(k)
         CROSS JOIN LATERAL (
           SELECT x.shift,
                  lpad(to_hex((extract(epoch FROM t.queued_at - x.shift) * 1000)::int8), 12, '0') AS hex,
                  md5(random()::text || g.k::text || t.id) AS rnd
             FROM (SELECT interval '40 days' + g.k * interval '1 second' AS shift) AS x
         ) AS s
        WHERE t.id = ANY($1::text[])`,
      [templates, from, to],
    );
    const done = to * TEMPLATES;
    const rate = done / ((Date.now() - startedAt) / 1000);
    note(
      `seeded ${done.toLocaleString("en")} of ${RUNS.toLocaleString("en")} (${rate.toFixed(0)} rows/s)`,
    );
  }
  await db.query("SET maintenance_work_mem = '256MB'");
  for (const { name, definition } of indexes) {
    note(`building ${name}`);
    await db.query(definition);
  }
  await db.query("RESET maintenance_work_mem");
  note(`seeded in ${((Date.now() - startedAt) / 1000).toFixed(0)} s, load average ${load()}`);
  note("VACUUM (ANALYZE) runs");
  await db.query("VACUUM (ANALYZE) punctual.runs");
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "punctual-retention-"));
  writeFileSync(join(dir, "handlers.js"), HANDLERS);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const name = `punctual_bench_retention_${String(process.pid)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = new pg.Client({ connectionString: url.toString() });
  const replicas: ChildProcess[] = [];
  const rows: string[] = [];
  try {
    // Migrates the schema.
    await createScheduler({ store: storeFromDatabaseUrl(url.toString()) }).stop();
    await db.connect();
    await seed(db, url.toString());
    const backlog = await scalar(db, `SELECT count(*) AS v FROM punctual.runs`);
    const size = await scalar(db, `SELECT pg_total_relation_size('punctual.runs') AS v`);
    note(
      `runs: ${backlog.toLocaleString("en")} rows, ${(size / 2 ** 30).toFixed(2)} GiB with indexes`,
    );

    // The backlog left, from the table's count of deleted rows (nothing else deletes runs here): a count
    // of the old runs would read 14 GiB each time, and load the machine it measures.
    const backlogAt = backlog - TEMPLATES;
    const deletedAt0 = await scalar(
      db,
      `SELECT n_tup_del AS v FROM pg_stat_user_tables WHERE relid = 'punctual.runs'::regclass`,
    );
    const oldRuns = async (): Promise<number> =>
      Math.max(
        0,
        backlogAt -
          ((await scalar(
            db,
            `SELECT n_tup_del AS v FROM pg_stat_user_tables WHERE relid = 'punctual.runs'::regclass`,
          )) -
            deletedAt0),
      );
    const log = new PurgeLog();
    // The purge alone: from the replicas' spawn, 30 s or until the backlog is gone.
    // The same burst with the backlog kept (a retention of ten years: no purge), the baseline.
    const keep = startReplicas(dir, url.toString(), RETENTION_OFF, log);
    replicas.push(...keep);
    const baseline = await createBurst(url.toString(), BURST, "burst without purge");
    const baselineRate = await burstRate(db, baseline.ids);
    rows.push(
      `| ${BURST.toLocaleString("en")}-task burst, backlog kept (no purge) | ${baselineRate.toFixed(0)} fires/s | load average ${load()} |`,
    );
    note(rows.at(-1) ?? "");
    await stopReplicas(keep);
    replicas.length = 0;

    // The purge alone: from the replicas' spawn, 30 s or until the backlog is gone.
    let lsn = await walLsn(db);
    let left = await oldRuns();
    let at = Date.now();
    replicas.push(...startReplicas(dir, url.toString(), "P30D", log));
    const aloneUntil = Date.now() + 30_000;
    await waitFor(
      async () => Date.now() > aloneUntil || (await oldRuns()) === 0,
      60_000,
      "30 s",
      1000,
    );
    let nowLeft = await oldRuns();
    const aloneRate = (left - nowLeft) / ((Date.now() - at) / 1000);
    const walPerRun = (await walSince(db, lsn)) / Math.max(1, left - nowLeft);
    rows.push(
      `| purge alone (first ${((Date.now() - at) / 1000).toFixed(0)} s from the replicas' spawn) | ` +
        `${aloneRate.toFixed(0)} runs/s deleted | ${walPerRun.toFixed(0)} B of the server's WAL (all databases) per deleted run, load average ${load()} |`,
    );
    note(rows.at(-1) ?? "");

    // A burst while the purge goes on.
    left = nowLeft;
    at = Date.now();
    lsn = await walLsn(db);
    const during = await createBurst(url.toString(), BURST, "burst during purge");
    const duringRate = await burstRate(db, during.ids);
    nowLeft = await oldRuns();
    const duringPurge = (left - nowLeft) / ((Date.now() - at) / 1000);
    rows.push(
      `| ${BURST.toLocaleString("en")}-task burst during the purge | ${duringRate.toFixed(0)} fires/s | ` +
        `${left > 0 ? `purge went on at ${duringPurge.toFixed(0)} runs/s` : "the backlog was already gone"} |`,
    );
    note(rows.at(-1) ?? "");

    // The rest of the backlog.
    const catchUpFrom = Date.now();
    left = nowLeft;
    try {
      await waitFor(
        async () => (await oldRuns()) === 0,
        CATCH_UP_MS,
        "the backlog to be deleted",
        1000,
      );
      const seconds = (Date.now() - catchUpFrom) / 1000;
      rows.push(
        `| the rest of the backlog | ${left.toLocaleString("en")} runs in ${(seconds / 60).toFixed(1)} min | ` +
          `${(left / Math.max(seconds, 0.001)).toFixed(0)} runs/s |`,
      );
    } catch {
      nowLeft = await oldRuns();
      rows.push(
        `| the rest of the backlog | not done in ${String(CATCH_UP_MS / 60_000)} min: ` +
          `${nowLeft.toLocaleString("en")} left | ${((left - nowLeft) / (CATCH_UP_MS / 1000)).toFixed(0)} runs/s |`,
      );
    }
    note(rows.at(-1) ?? "");
    note(`retention rounds that logged a backlog: ${String(log.rounds)}, ${log.purged} runs`);

    // The same burst with no backlog.
    const after = await createBurst(url.toString(), BURST, "burst after purge");
    const afterRate = await burstRate(db, after.ids);
    const leftAfter = await oldRuns();
    rows.push(
      `| the same burst, ${leftAfter > 0 ? `${leftAfter.toLocaleString("en")} runs still to purge` : "no backlog left"} | ${afterRate.toFixed(0)} fires/s | load average ${load()} |`,
    );
    note(rows.at(-1) ?? "");
    const finalSize = await scalar(db, `SELECT pg_total_relation_size('punctual.runs') AS v`);
    rows.push(
      `| \`runs\` on disk | ${(size / 2 ** 30).toFixed(2)} GiB before, ${(finalSize / 2 ** 30).toFixed(2)} GiB after (space is reused, not returned: VACUUM FULL or pg_repack returns it) | |`,
    );
  } finally {
    await stopReplicas(replicas);
    await db.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `${new Date().toISOString()}, ${String(cpus().length)} x ${cpus()[0]?.model ?? "?"}, node ` +
      `${process.version}, load average ${load()}, ${RUNS.toLocaleString("en")} finished runs past the retention, 2 replicas\n\n` +
      `| phase | figure | |\n| --- | --- | --- |\n` +
      rows.join("\n"),
  );
}

await main();
