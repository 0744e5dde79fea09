/**
 * SQLite errors translated once, at the edge: which unique key a failed write broke. SQLite names the
 * columns, not the index, so the key is told apart by the columns and the row's trigger.
 */
import Database from "better-sqlite3";
import type { RunTrigger } from "../../../domain/run.js";

export type RunUniqueKey =
  | "runs_pkey"
  | "runs_scheduled_occurrence_uq"
  | "runs_backfill_occurrence_uq"
  | "runs_manual_key_uq"
  | "runs_task_slot_uq"
  | "runs_thread_slot_uq";

const PREFIX = "UNIQUE constraint failed: ";

/** The unique key of `runs` that `error` reports broken by a write of a run with `trigger`, or null. */
export function brokenRunKey(error: unknown, trigger: RunTrigger): RunUniqueKey | null {
  if (!(error instanceof Database.SqliteError)) return null;
  if (error.code !== "SQLITE_CONSTRAINT_UNIQUE" && error.code !== "SQLITE_CONSTRAINT_PRIMARYKEY") {
    return null;
  }
  if (!error.message.startsWith(PREFIX)) return null;
  switch (error.message.slice(PREFIX.length)) {
    case "runs.id":
      return "runs_pkey";
    // Since migration 21 one index keeps both occurrence keys; the names are those of the two it replaced.
    case "index 'runs_occurrence_uq'":
      if (trigger === "scheduled") return "runs_scheduled_occurrence_uq";
      return trigger === "backfill" ? "runs_backfill_occurrence_uq" : null;
    case "runs.task_id, runs.idempotency_key":
      return "runs_manual_key_uq";
    // Since migration 17 the slots are run_active's rows, written by a trigger on runs in the same
    // statement; the keys keep the names of the partial indexes they replaced.
    case "index 'run_active_task_uq'":
      return "runs_task_slot_uq";
    case "run_active.thread_scope, run_active.thread_id":
      return "runs_thread_slot_uq";
    default:
      return null;
  }
}

/** Whether `error` reports a task key already taken by another task of the owner (`tasks_key_uq`). */
export function isTaskKeyTaken(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError &&
    error.code === "SQLITE_CONSTRAINT_UNIQUE" &&
    error.message === `${PREFIX}tasks.owner, tasks.task_key`
  );
}

/**
 * SQLite result codes of a write that will fail again (docs/storage.md#writes-the-store-refuses): a
 * constraint (`CHECK (json_valid(...))`, NOT NULL, a foreign key), a datatype mismatch, a value too big.
 * BUSY, LOCKED, IOERR, FULL and the rest are outages.
 */
const REFUSALS = ["SQLITE_CONSTRAINT", "SQLITE_MISMATCH", "SQLITE_TOOBIG", "SQLITE_RANGE"];

/** Whether `error` is SQLite refusing the value written, not failing to write. */
export function isSqliteRefusal(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) return false;
  return REFUSALS.some((code) => error.code === code || error.code.startsWith(`${code}_`));
}
