/**
 * Migration 34 (issue 30): one index entry fewer for every scheduled or backfilled run inserted
 * (docs/storage.md#the-statements-of-one-fire-and-their-wal), as SQLite's migration 21. A task's history
 * (`runs_history_idx (task_id, scheduled_for DESC, id DESC)`) and the two occurrence keys
 * (`runs_scheduled_occurrence_uq` and `runs_backfill_occurrence_uq`, `(task_id, scheduled_for)` each for
 * its trigger) were three indexes, and a scheduled run entered two of them. `runs_occurrence_uq` is all
 * three: unique on the task, the instant and the trigger for a scheduled or backfilled run (one decision
 * per occurrence and trigger, as before: a scheduled and a backfilled run of one instant still coexist);
 * a manual run's third column is NULL, so the key never refuses one (NULLs are distinct; a manual run's
 * key is `runs_manual_key_uq`). A task's history walks it backwards in instant order; the few runs of
 * one task at one instant (a scheduled, a backfilled and manual ones) are put in id order among
 * themselves (an incremental sort of each instant's group, never of the whole history).
 *
 * SQLite's migration 21 keys the same index on the trigger's name, or the run's id for a manual run.
 * Here the trigger is one letter (`s`, `b`): an entry of 64 bytes instead of 72 (the task's id, the
 * instant aligned to 8 bytes, then 10 bytes of 'scheduled' rounded up to 8), 8 bytes of WAL per fire.
 *
 * Its instants ascend, as on SQLite, although a history is read newest first (a backward walk costs
 * what a forward one does). In a burst of once tasks (one run each) the order makes no difference
 * (`bench/fire-wal.ts`: the same entries, splits within noise, either way); for tasks with long
 * histories a task's newest run goes at the end of its range, and ascending made a 4% smaller index
 * than descending (200,000 runs of 10 tasks inserted round by round: 2,842 pages against 2,972;
 * 200 rounds of 1,000 tasks: 2,237 against 2,245).
 *
 * The rows already there were unique under the old keys, so they are under the new one; no run is
 * touched. Building the index reads `runs` whole and holds writes to it (a `SHARE` lock, for the
 * runner's transaction): 1.2 to 2.4 s per 1,000,000 runs (65 MB of index) on the benchmark machine,
 * the table in memory (docs/storage.md#postgresql, "Migrations").
 */
export const POSTGRES_MIGRATION_0034 = `
CREATE UNIQUE INDEX runs_occurrence_uq
  ON runs (task_id, scheduled_for, (CASE trigger WHEN 'scheduled' THEN 's' WHEN 'backfill' THEN 'b' END));
DROP INDEX runs_history_idx, runs_scheduled_occurrence_uq, runs_backfill_occurrence_uq;
`;
