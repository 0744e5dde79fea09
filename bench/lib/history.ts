/**
 * The "history" variant's setup: `runs` holding what 30 days of retention keep, `count` terminal runs of
 * other tasks spread over the last 30 days, before the burst's tasks are created. Writing 1,000,000 runs
 * through the scheduler would take most of an hour, so the rows are copies of real ones: a few hundred
 * once tasks are created through the library and run by the replicas (so every field of a terminal run is
 * what punctual itself wrote), then each of those runs is copied in SQL with a fresh id, an occurrence
 * moved back in time (every timestamp shifted alike, the idempotency key derived from the new occurrence
 * as punctual derives it) and nothing else changed. The copy reads the table's columns from the catalogue,
 * so it follows the schema as it changes. Then `VACUUM (ANALYZE)`, as autovacuum has long done for rows
 * that old.
 */
import pg from "pg";
import type { Cluster } from "./cluster.js";
import { LibraryClient } from "./library.js";
import { pace } from "./pace.js";
import { progress } from "./progress.js";
import { readRuns } from "./punctual-runs.js";
import { sleepUntil, waitUntil, wholeSecondAfter } from "./wait.js";

/** Template tasks whose runs are copied. */
const TEMPLATES = 500;
/** Copies inserted per statement (progress, and no single huge transaction). */
const ROWS_PER_STATEMENT = 100_000;
const DAY_MS = 86_400_000;
/** The history spans (now - 30 days + margin, now - margin): the retention sweep has nothing to delete. */
const MARGIN_MS = 3_600_000;

const TERMINAL = new Set(["succeeded", "failed", "timed_out", "cancelled", "skipped", "missed"]);

/** One SQL expression per column of `runs` for the copy of template row `t` as history row `i`. */
function copyExpressions(columns: readonly { name: string; type: string }[]): string[] {
  return columns.map(({ name, type }) => {
    const col = `t.${name}`;
    if (name === "id") {
      // A UUIDv7-layout id for the new occurrence's millisecond, as the store's own ids.
      return `(substr(h.hex, 1, 8) || '-' || substr(h.hex, 9, 4) || '-7' || substr(h.rnd, 1, 3) || '-8' ||
        substr(h.rnd, 4, 3) || '-' || substr(h.rnd, 7, 12))`;
    }
    if (name === "idempotency_key") {
      return `('punctual:' || t.task_id || ':' || t.trigger || ':' || h.ms::text)`;
    }
    if (type === "timestamp with time zone") return `${col} - h.shift`;
    return col;
  });
}

export interface History {
  readonly runs: number;
  readonly templates: number;
  readonly ms: number;
}

/** Fills the cluster's `runs` with `count` terminal runs over 30 days; the replicas must be running. */
export async function seedHistory(
  cluster: Cluster,
  count: number,
  scope: string,
): Promise<History> {
  const store = cluster.store;
  if (store.kind !== "postgres") throw new Error("history is a PostgreSQL variant");
  const startedAt = Date.now();
  const templates = Math.min(TEMPLATES, count);
  const client = new LibraryClient(store);
  await client.open();
  const dueAt = wholeSecondAfter(pace.leadMs("pg2", "create", templates));
  const schedule = { type: "once", run_at: new Date(dueAt).toISOString() };
  const inputs = Array.from({ length: templates }, () => ({
    title: "history",
    schedule,
    target: { kind: "handler", name: "noop" },
  }));
  const created = await client.create(inputs, "create");
  await client.close();
  await sleepUntil(dueAt);
  const window = { from: dueAt, to: dueAt + 1 };
  const ran = await waitUntil(
    async () => {
      const runs = await readRuns(store, window);
      return runs.length === templates && runs.every((r) => TERMINAL.has(r.status));
    },
    { timeoutMs: 120_000, everyMs: 250 },
  );
  if (!ran) throw new Error(`history: the ${templates} template runs did not end within 120 s`);

  const db = new pg.Client({ connectionString: store.url });
  await db.connect();
  try {
    const columns = (
      await db.query<{ name: string; type: string }>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = 'punctual' AND table_name = 'runs' ORDER BY ordinal_position`,
      )
    ).rows;
    const names = columns.map((c) => c.name).join(", ");
    // The template runs, fixed before the first copy: the copies belong to the same tasks.
    const templateRuns = (
      await db.query<{ id: string }>(
        "SELECT id FROM punctual.runs WHERE task_id = ANY($1::text[])",
        [created.ids],
      )
    ).rows.map((r) => r.id);
    const copies = Math.ceil(count / templates);
    const spanMs = 30 * DAY_MS - 2 * MARGIN_MS;
    const perStatement = Math.max(1, Math.floor(ROWS_PER_STATEMENT / templates));
    let inserted = 0;
    for (let from = 0; from < copies; from += perStatement) {
      const to = Math.min(copies, from + perStatement);
      // Row i = k * templates + ti goes i/count of the span back; k ranges over this statement's copies.
      const result = await db.query(
        `WITH t AS (
           SELECT r.*, (row_number() OVER (ORDER BY r.id) - 1)::bigint AS ti
             FROM punctual.runs AS r WHERE r.id = ANY($1::text[])
         )
         INSERT INTO punctual.runs (${names})
         SELECT ${copyExpressions(columns).join(", ")}
           FROM t
           CROSS JOIN generate_series($2::int, $3::int - 1) AS g(k)
           CROSS JOIN LATERAL (
             SELECT s1.shift, s1.ms, lpad(to_hex(s1.ms), 12, '0') AS hex, s1.rnd
               FROM (
                 SELECT s0.shift, (extract(epoch FROM t.scheduled_for - s0.shift) * 1000)::bigint AS ms,
                        md5(random()::text || t.id || g.k::text) AS rnd
                   FROM (SELECT make_interval(secs => ($4::float8
                          + (g.k * $5::bigint + t.ti)::float8 * $6::float8 / $7::float8) / 1000) AS shift) AS s0
               ) AS s1
           ) AS h
          WHERE g.k * $5::bigint + t.ti < $7::bigint`,
        [templateRuns, from, to, MARGIN_MS, templates, spanMs, count],
      );
      inserted += result.rowCount ?? 0;
      progress(scope, `history: ${inserted}/${count} terminal runs`);
    }
    await db.query("VACUUM (ANALYZE) punctual.runs");
    const ms = Date.now() - startedAt;
    progress(scope, `history of ${inserted} runs over 30 days in ${(ms / 1000).toFixed(1)} s`);
    return { runs: inserted, templates, ms };
  } finally {
    await db.end();
  }
}

/** `ANALYZE` of every table of the database, as autovacuum does a minute after the tasks arrive. */
export async function analyzeAll(url: string): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const startedAt = Date.now();
    await db.query("ANALYZE");
    return Date.now() - startedAt;
  } finally {
    await db.end();
  }
}
