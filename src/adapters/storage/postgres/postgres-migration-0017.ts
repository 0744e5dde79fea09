/**
 * Migration 17 (issue 30): two entries less per fire on the hot path
 * (docs/storage.md#write-ahead-log-per-fire), keeping every truth they served.
 * - `runs_task_fk` is dropped. It made every run insert lock its task `FOR KEY SHARE` (a WAL record per
 *   run) and check it by primary key, to guard something the writers already guarantee: runs are
 *   inserted only by admission and owner commands, each holding its task's row lock on a task that is
 *   not deleted, and only a deleted task with no active run is ever removed (`purge`, which now deletes
 *   that task's runs itself in the same statement, as the cascade did).
 * - `runs_thread_slot_uq` leaves out the runs on a thread of their own (`thread_id = id`, a fresh thread
 *   per run: most runs). For them the key compared a run with itself; one active run per thread stays
 *   enforced by the database for every run by `claim_slots_thread_uq`, since a run is launching or
 *   running only while it holds a budget slot (bound in the claim's own statement, freed by the slot
 *   trigger), and by this index for every run on a shared thread. The index is rebuilt in the
 *   migration's transaction: writes to `runs` wait while it scans the table (about a second per million
 *   runs here).
 */
export const POSTGRES_MIGRATION_0017 = `
ALTER TABLE runs DROP CONSTRAINT runs_task_fk;
DROP INDEX runs_thread_slot_uq;
CREATE UNIQUE INDEX runs_thread_slot_uq ON runs (thread_scope, thread_id)
  WHERE status IN ('launching', 'running') AND thread_id <> id;
`;
