/**
 * SQLite migration 21 (issue 30): one index entry fewer for every scheduled or backfilled run inserted
 * (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal). A task's history
 * (`runs_history_idx (task_id, scheduled_for DESC, id DESC)`) and the two occurrence keys
 * (`runs_scheduled_occurrence_uq` and `runs_backfill_occurrence_uq`, `(task_id, scheduled_for)` each for
 * its trigger) were three indexes, and a scheduled run entered two of them. `runs_occurrence_uq` is all
 * three: unique on the task, the instant and the trigger for a scheduled or backfilled run (one decision
 * per occurrence and trigger, as before), and on the run's own id for a manual one (never refused here:
 * a manual run's key is `runs_manual_key_uq`). A task's history walks it in instant order; runs of one
 * task at one instant (a scheduled, a backfilled and manual ones) are put in id order among themselves.
 * Its instants ascend although a history is read newest first (SQLite walks an index backwards as cheaply
 * as forwards): a task's newest run then goes at the end of the task's range, and an insert at the end of
 * a page fills it, where one before the last entry of a full page splits it in halves.
 * The rows already there were unique under the old keys, so they are under the new one; no run is
 * touched.
 */
export const SQLITE_MIGRATION_0021 = `
CREATE UNIQUE INDEX runs_occurrence_uq
  ON runs (task_id, scheduled_for, (CASE "trigger" WHEN 'manual' THEN id ELSE "trigger" END));
DROP INDEX runs_history_idx;
DROP INDEX runs_scheduled_occurrence_uq;
DROP INDEX runs_backfill_occurrence_uq;
`;
