/**
 * SQLite migration 23 (issue 30): a task with no next run leaves the due index
 * (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal). `task_state_due_idx (next_run_at,
 * task_id)` held every enabled task, those with no next run under NULL: a once task's admission moved its
 * entry from its instant to the NULLs, and its verdict (the task completed) took it out, two index writes
 * per fire. With `next_run_at IS NOT NULL` in its predicate the admission takes it out and the verdict
 * writes no index entry. The due scan (`next_run_at <= ?`) and the next due instant (`next_run_at IS NOT
 * NULL`) already exclude NULL, so SQLite still uses it for both. No task or run is touched.
 */
export const SQLITE_MIGRATION_0023 = `
DROP INDEX task_state_due_idx;
CREATE INDEX task_state_due_idx ON task_state (next_run_at, task_id)
  WHERE status = 'enabled' AND defect_at IS NULL AND next_run_at IS NOT NULL;
`;
