/**
 * SQLite migration 15 (issue 30): what each fire changes of a task moves to a narrow `task_state` row
 * (docs/storage.md#task-state-on-sqlite). A fire used to rewrite the whole `tasks` row, JSON definition
 * and all, two or three times (admission, launch, verdict); it now rewrites a row of a few integers keyed
 * by the task id (WITHOUT ROWID: one b-tree per write). The due index moves with the fields it names.
 * Every task keeps its state: the rows are copied before the columns are dropped. `tasks` is not rebuilt
 * (that would cascade-delete its runs, as migration 13 says): the moved columns are dropped in place.
 */
export const SQLITE_MIGRATION_0015 = `
CREATE TABLE task_state (
  task_id         TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  status          TEXT NOT NULL
                    CHECK (status IN ('enabled', 'paused', 'completed', 'failed', 'cancelled')),
  next_run_at     INTEGER,
  decided_through INTEGER NOT NULL,
  admitted_count  INTEGER NOT NULL DEFAULT 0 CHECK (admitted_count >= 0),
  last_run_at     INTEGER,
  last_run_id     TEXT,
  last_error      TEXT,
  run_count       INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0),
  defect_at       INTEGER
) STRICT, WITHOUT ROWID;
INSERT INTO task_state (task_id, status, next_run_at, decided_through, admitted_count, last_run_at,
                        last_run_id, last_error, run_count, defect_at)
  SELECT id, status, next_run_at, decided_through, admitted_count, last_run_at, last_run_id,
         last_error, run_count, defect_at
  FROM tasks;
DROP INDEX tasks_due_idx;
ALTER TABLE tasks DROP COLUMN status;
ALTER TABLE tasks DROP COLUMN next_run_at;
ALTER TABLE tasks DROP COLUMN decided_through;
ALTER TABLE tasks DROP COLUMN admitted_count;
ALTER TABLE tasks DROP COLUMN last_run_at;
ALTER TABLE tasks DROP COLUMN last_run_id;
ALTER TABLE tasks DROP COLUMN last_error;
ALTER TABLE tasks DROP COLUMN run_count;
ALTER TABLE tasks DROP COLUMN defect_at;
CREATE INDEX task_state_due_idx ON task_state (next_run_at, task_id)
  WHERE status = 'enabled' AND defect_at IS NULL;
`;
