/**
 * Row objects from the arrays better-sqlite3's raw mode returns (`RowReader` in sqlite-statements.ts),
 * one object literal per row type. A literal builds every row of a type with one hidden class in one
 * allocation; the loop over a column list it replaces stored each key through a generic keyed store
 * and cost 1.2 to 4 us a 31-column run row against 0.1 to 0.2 us (measured alone, 200-row batches),
 * and a fire reads about three such rows (docs/storage.md#sqlite, "Batches and statements").
 * `RowReader` checks at prepare time that a shaper puts value i under its statement's column i, so a
 * shaper and its column list cannot drift apart unnoticed.
 */
import type { RunRow, TaskContextRow, TaskRow } from "./sqlite-rows.js";

/** A `runs` row from its values in `RUN_COLUMNS` order. */
export function runRowOf(v: readonly unknown[]): RunRow {
  return {
    id: v[0],
    task_id: v[1],
    owner: v[2],
    trigger: v[3],
    scheduled_for: v[4],
    fire_at: v[5],
    status: v[6],
    reason: v[7],
    missed_count: v[8],
    missed_until: v[9],
    attempt: v[10],
    failures: v[11],
    not_before: v[12],
    thread_scope: v[13],
    thread_id: v[14],
    exclusive: v[15],
    claim_token: v[16],
    claim_expires_at: v[17],
    claimed_by: v[18],
    target_run_id: v[19],
    idempotency_key: v[20],
    queued_at: v[21],
    launched_at: v[22],
    deadline_at: v[23],
    finished_at: v[24],
    lateness_ms: v[25],
    late: v[26],
    cancel_requested_at: v[27],
    error: v[28],
    result: v[29],
    moved: v[30],
  } as RunRow;
}

/** A task row from its values in `TASK_READ_COLUMNS` order (the table's, `stamp`, `calendars`). */
export function taskReadRowOf(v: readonly unknown[]): TaskRow {
  return {
    id: v[0],
    owner: v[1],
    title: v[2],
    description: v[3],
    schedule: v[4],
    schedule_type: v[5],
    target: v[6],
    target_kind: v[7],
    handler_name: v[8],
    context: v[9],
    thread_scope: v[10],
    thread_id: v[11],
    options: v[12],
    metadata: v[13],
    status: v[14],
    next_run_at: v[15],
    decided_through: v[16],
    admitted_count: v[17],
    last_run_at: v[18],
    last_run_id: v[19],
    last_error: v[20],
    run_count: v[21],
    version: v[22],
    webhook_secret: v[23],
    retiring_secret: v[24],
    retiring_until: v[25],
    created_at: v[26],
    updated_at: v[27],
    deleted_at: v[28],
    task_key: v[29],
    task_group: v[30],
    defect_at: v[31],
    stamp: v[32],
    calendars: v[33],
  } as TaskRow;
}

/** A task context row from its values in `TASK_CONTEXT_COLUMNS` order. */
export function taskContextRowOf(v: readonly unknown[]): TaskContextRow {
  return {
    id: v[0],
    schedule_type: v[1],
    options: v[2],
    target_kind: v[3],
    once_at: v[4],
    untold: v[5],
  } as TaskContextRow;
}
