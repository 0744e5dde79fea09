/**
 * Reads punctual's run ledger (the `runs` table) after a scenario: each decision with its nominal and
 * fire times, status and launch bookkeeping, on either store, as plain numbers (epoch ms).
 */
import Database from "better-sqlite3";
import pg from "pg";
import type { StoreTarget } from "./store-target.js";

export interface RunRecord {
  readonly taskId: string;
  readonly scheduledFor: number;
  readonly fireAt: number;
  readonly status: string;
  readonly reason: string | null;
  readonly attempt: number;
  readonly launchedAt: number | null;
  readonly finishedAt: number | null;
  readonly latenessMs: number | null;
  readonly claimedBy: string | null;
}

interface Window {
  /** Only decisions whose nominal time is in [from, to). */
  readonly from: number;
  readonly to: number;
}

const TERMINAL = "('succeeded', 'failed', 'timed_out', 'cancelled', 'skipped', 'missed')";

export async function readRuns(store: StoreTarget, window: Window): Promise<RunRecord[]> {
  if (store.kind === "sqlite") {
    const db = new Database(store.path, { readonly: true });
    try {
      return db
        .prepare<[number, number], Record<string, unknown>>(
          `SELECT task_id, scheduled_for, fire_at, status, reason, attempt, launched_at, finished_at,
             lateness_ms, claimed_by FROM runs WHERE scheduled_for >= ? AND scheduled_for < ?`,
        )
        .all(window.from, window.to)
        .map(toRecord);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    const ms = (column: string): string =>
      `(extract(epoch from r.${column}) * 1000)::float8 AS ${column}`;
    const result = await client.query<Record<string, unknown>>(
      `SELECT r.task_id, ${ms("scheduled_for")}, ${ms("fire_at")}, r.status, r.reason, r.attempt,
         ${ms("launched_at")}, ${ms("finished_at")}, r.lateness_ms::float8 AS lateness_ms, r.claimed_by
       FROM punctual.runs AS r
       WHERE r.scheduled_for >= to_timestamp($1::float8 / 1000) AND r.scheduled_for < to_timestamp($2::float8 / 1000)`,
      [window.from, window.to],
    );
    return result.rows.map(toRecord);
  } finally {
    await client.end();
  }
}

/**
 * Runs decided for an occurrence in `window`, whatever their status: with the claim fused into
 * admission a replica admits about its room per round, so the unfinished count is 0 between rounds while
 * tasks still wait to be admitted; a burst is over only once every occurrence has a run.
 */
export function countDecided(store: StoreTarget, window: Window): Promise<number> {
  return countRuns(store, window, "");
}

/** Decisions in the window not yet terminal (a scenario waits for 0 before it stops the replicas). */
export function countUnfinished(store: StoreTarget, window: Window): Promise<number> {
  return countRuns(store, window, ` AND status NOT IN ${TERMINAL}`);
}

async function countRuns(store: StoreTarget, window: Window, where: string): Promise<number> {
  if (store.kind === "sqlite") {
    const db = new Database(store.path, { readonly: true });
    try {
      const row = db
        .prepare<[number, number], { n: number }>(
          `SELECT count(*) AS n FROM runs WHERE scheduled_for >= ? AND scheduled_for < ?${where}`,
        )
        .get(window.from, window.to);
      return row?.n ?? 0;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM punctual.runs WHERE scheduled_for >= to_timestamp($1::float8 / 1000)
         AND scheduled_for < to_timestamp($2::float8 / 1000)${where}`,
      [window.from, window.to],
    );
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function textOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function toRecord(row: Record<string, unknown>): RunRecord {
  return {
    taskId: String(row["task_id"]),
    scheduledFor: Number(row["scheduled_for"]),
    fireAt: Number(row["fire_at"]),
    status: String(row["status"]),
    reason: textOrNull(row["reason"]),
    attempt: Number(row["attempt"]),
    launchedAt: num(row["launched_at"]),
    finishedAt: num(row["finished_at"]),
    latenessMs: num(row["lateness_ms"]),
    claimedBy: textOrNull(row["claimed_by"]),
  };
}

/** Counts of decisions by `status` (and `status:reason` where a reason is set). */
export function statusCounts(runs: readonly RunRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) {
    const key = run.reason === null ? run.status : `${run.status}:${run.reason}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
