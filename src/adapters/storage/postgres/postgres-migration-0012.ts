/**
 * Migration 12 (issue 15): \`defect_at\`, when admission found the task's stored fields no longer parse
 * (docs/operations.md#a-task-that-does-not-parse). Such a task leaves the due index, so it is not read
 * again every tick; an edit that repairs it clears the column. The index is built while the migration
 * holds its lock, as migration 4's was.
 */
export const POSTGRES_MIGRATION_0012 = `
ALTER TABLE tasks ADD COLUMN defect_at timestamptz;

DROP INDEX tasks_due_idx;
CREATE INDEX tasks_due_idx ON tasks (next_run_at, id)
  WHERE status = 'enabled' AND deleted_at IS NULL AND defect_at IS NULL;
`;
