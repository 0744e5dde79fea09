/**
 * SQLite migration 3: the due index also orders by id. Admission reads due tasks `ORDER BY next_run_at,
 * id`; on `(next_run_at)` alone every task due at the same instant (a burst, a popular cron minute) was
 * sorted in a temporary B-tree on each batch, so one batch cost as much as all of them.
 */
export const SQLITE_MIGRATION_0003 = `
DROP INDEX tasks_due_idx;
CREATE INDEX tasks_due_idx ON tasks (next_run_at, id)
  WHERE status = 'enabled' AND deleted_at IS NULL;
`;
