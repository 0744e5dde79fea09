/**
 * Migration 4: the due index also orders by id. Admission reads due tasks `ORDER BY next_run_at, id
 * LIMIT n FOR UPDATE SKIP LOCKED`; on `(next_run_at)` alone the planner read every due task and sorted
 * them on each batch (10,000 tasks due at one instant: a 7 MB sort on disk, about 70 ms per batch of
 * 500), so one batch cost as much as all of them. Built while the migration holds its lock: writes to
 * `tasks` wait for the build (about a second per million tasks).
 */
export const POSTGRES_MIGRATION_0004 = `
DROP INDEX tasks_due_idx;
CREATE INDEX tasks_due_idx ON tasks (next_run_at, id)
  WHERE status = 'enabled' AND deleted_at IS NULL;
`;
