/**
 * Migration 7 (issue 16): a task's key, unique among its owner's tasks not deleted
 * (docs/semantics.md#task-keys), and the declared-schedules group it belongs to. Nullable columns
 * without a default are added without a rewrite; a deleted task leaves the unique index, so its key can
 * be taken again.
 */
export const POSTGRES_MIGRATION_0007 = `
ALTER TABLE tasks ADD COLUMN task_key text;
ALTER TABLE tasks ADD COLUMN task_group text;

CREATE UNIQUE INDEX tasks_key_uq ON tasks (owner, task_key)
  WHERE task_key IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX tasks_group_idx ON tasks (owner, task_group)
  WHERE task_group IS NOT NULL AND deleted_at IS NULL;
`;
