/**
 * Reads the run ledger straight from the database the workers share (PostgreSQL schema `punctual`, or a
 * SQLite file), as the crash tests' source of truth: the full ledger for the verdict, and a cheap progress
 * summary for the bounded waits.
 */
import Database from "better-sqlite3";
import pg from "pg";
import type { Ledger, LedgerRun, LedgerTask } from "./ledger-check.js";

/** Active runs by status and claimer, and how far admission has come. */
export interface LedgerProgress {
  readonly active: readonly { status: string; claimedBy: string | null; count: number }[];
  /** The earliest nominal time of a queued run (epoch ms), or null when none is queued. */
  readonly oldestQueued: number | null;
  /** Once tasks with a scheduled decision. */
  readonly onceDecided: number;
  /** The smallest `decided_through` of the interval tasks (epoch ms), or null without any. */
  readonly intervalDecidedThrough: number | null;
}

export interface LedgerSource {
  read(): Promise<Ledger>;
  progress(): Promise<LedgerProgress>;
  close(): Promise<void>;
}

const ACTIVE = "status IN ('queued', 'launching', 'running')";
const ONCE_DECIDED = `SELECT count(*) AS n FROM tasks t WHERE t.schedule_type = 'once'
  AND EXISTS (SELECT 1 FROM runs r WHERE r.task_id = t.id AND r."trigger" = 'scheduled')`;

type Row = Record<string, unknown>;

function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

function str(value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`expected a string, got ${String(value)}`);
  return value;
}

function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : str(value);
}

function runFrom(row: Row): LedgerRun {
  return {
    id: str(row.id),
    taskId: str(row.task_id),
    trigger: str(row.trigger),
    scheduledFor: num(row.scheduled_for),
    status: str(row.status),
    reason: strOrNull(row.reason),
    missedCount: numOrNull(row.missed_count),
    missedUntil: numOrNull(row.missed_until),
    attempt: num(row.attempt),
    claimedBy: strOrNull(row.claimed_by),
  };
}

function taskFrom(row: Row): LedgerTask {
  return {
    id: str(row.id),
    scheduleType: str(row.schedule_type),
    status: str(row.status),
    decidedThrough: num(row.decided_through),
  };
}

function activeFrom(rows: readonly Row[]): LedgerProgress["active"] {
  return rows.map((row) => ({
    status: str(row.status),
    claimedBy: strOrNull(row.claimed_by),
    count: num(row.n),
  }));
}

/** A timestamptz expression as epoch ms. */
const epochMs = (expression: string): string =>
  `round(extract(epoch from ${expression}) * 1000)::int8`;
const ms = (column: string): string => `${epochMs(column)} AS ${column}`;

/** The ledger in schema `punctual` of the PostgreSQL database at `url`. */
export function postgresLedger(url: string): LedgerSource {
  const pool = new pg.Pool({ connectionString: url, max: 2, options: "-c search_path=punctual" });
  // An idle connection cut by a database restart: the pool drops it and the next query reconnects.
  pool.on("error", () => undefined);
  const query = async (text: string): Promise<Row[]> => (await pool.query<Row>(text)).rows;
  return {
    read: async () => {
      // Since migration 23 a task's state is on its task_state row (docs/storage.md#tasks-and-task_state).
      const tasks = await query(
        `SELECT id, schedule_type, status, ${ms("decided_through")}` +
          ` FROM tasks JOIN task_state ON task_state.task_id = tasks.id`,
      );
      const runs = await query(
        `SELECT id, task_id, "trigger", ${ms("scheduled_for")}, status, reason, missed_count,
                ${ms("missed_until")}, attempt, claimed_by FROM runs`,
      );
      return { tasks: tasks.map(taskFrom), runs: runs.map(runFrom) };
    },
    progress: async () => {
      const active = await query(
        `SELECT status, claimed_by, count(*) AS n FROM runs WHERE ${ACTIVE} GROUP BY 1, 2`,
      );
      const once = await query(ONCE_DECIDED);
      const queued = await query(
        `SELECT ${epochMs("min(scheduled_for)")} AS at FROM runs WHERE status = 'queued'`,
      );
      const interval = await query(
        `SELECT ${epochMs("min(decided_through)")} AS at FROM tasks` +
          ` JOIN task_state ON task_state.task_id = tasks.id WHERE schedule_type = 'interval'`,
      );
      return {
        active: activeFrom(active),
        oldestQueued: numOrNull(queued[0]?.at),
        onceDecided: num(once[0]?.n),
        intervalDecidedThrough: numOrNull(interval[0]?.at),
      };
    },
    close: () => pool.end(),
  };
}

/** The ledger in the SQLite file at `path` (read while the workers write: WAL readers do not block). */
export function sqliteLedger(path: string): LedgerSource {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 10_000 });
  const all = (text: string): Row[] => db.prepare<[], Row>(text).all();
  return {
    read: () =>
      Promise.resolve({
        tasks: all(
          `SELECT id, schedule_type, status, decided_through
           FROM tasks JOIN task_state ON task_state.task_id = tasks.id`,
        ).map(taskFrom),
        runs: all(
          `SELECT id, task_id, "trigger", scheduled_for, status, reason, missed_count, missed_until,
                  attempt, claimed_by FROM runs`,
        ).map(runFrom),
      }),
    progress: () =>
      Promise.resolve({
        active: activeFrom(
          all(`SELECT status, claimed_by, count(*) AS n FROM runs WHERE ${ACTIVE} GROUP BY 1, 2`),
        ),
        oldestQueued: numOrNull(
          all("SELECT min(scheduled_for) AS at FROM runs WHERE status = 'queued'")[0]?.at,
        ),
        onceDecided: num(all(ONCE_DECIDED)[0]?.n),
        intervalDecidedThrough: numOrNull(
          all(
            `SELECT min(decided_through) AS at FROM tasks
             JOIN task_state ON task_state.task_id = tasks.id WHERE schedule_type = 'interval'`,
          )[0]?.at,
        ),
      }),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
