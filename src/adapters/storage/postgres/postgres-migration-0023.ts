/**
 * Migration 23 (issue 30): what a fire changes on its task moves out of the wide `tasks` row into a narrow
 * `task_state` row (docs/storage.md#tasks-and-task_state). Every fire rewrote the `tasks` row (admission:
 * `next_run_at`, `decided_through`, `admitted_count`; the verdict: `last_run_*`, `run_count`, `last_error`,
 * a once task's `status`), and since `next_run_at` and `status` were in `tasks_due_idx` each of those
 * versions was a new tuple with an entry in each of the table's seven indexes.
 *
 * `task_state` holds the columns the hot path writes, plus `version` (the fence of the verdict: owner
 * commands bump it, the verdict writes only where it is still the version read, under the lock of this
 * row). Its only secondary index is on `due_at`, a stored generated column (`next_run_at` while the task
 * is enabled and not defective, NULL otherwise), so the due index mentions no column a verdict writes: a
 * verdict is a heap-only update, and admission adds one due entry. Fillfactor 30 leaves room on each page
 * for both of a fire's new versions (admission's, not heap-only, goes beside the old one when it can): at
 * 50 only a third of the verdicts found room and were heap-only, at 30 all of them (a 2,000-task burst).
 * A deleted task's `next_run_at` is NULL (the delete sets it, docs/semantics.md#task-operations), so it is
 * never due; the copy below makes it so for any row where it was not.
 *
 * `tasks` keeps the definition, written only by owner commands. One transaction (the runner's): a
 * migration interrupted at any point leaves schema 22 untouched and is applied again from the start.
 */
export const POSTGRES_MIGRATION_0023 = `
CREATE TABLE task_state (
  task_id text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  version integer NOT NULL,
  status text NOT NULL CHECK (status IN ('enabled', 'paused', 'completed', 'failed', 'cancelled')),
  next_run_at timestamptz,
  decided_through timestamptz NOT NULL,
  admitted_count bigint NOT NULL DEFAULT 0,
  run_count bigint NOT NULL DEFAULT 0,
  defect_at timestamptz,
  last_run_at timestamptz,
  last_run_id text,
  last_error text,
  due_at timestamptz GENERATED ALWAYS AS
    (CASE WHEN status = 'enabled' AND defect_at IS NULL THEN next_run_at END) STORED
) WITH (fillfactor = 30);

INSERT INTO task_state (task_id, version, status, next_run_at, decided_through, admitted_count,
                        run_count, defect_at, last_run_at, last_run_id, last_error)
SELECT id, version, status, CASE WHEN deleted_at IS NULL THEN next_run_at END, decided_through,
       admitted_count, run_count, defect_at, last_run_at, last_run_id, last_error
  FROM tasks;

CREATE INDEX task_state_due_idx ON task_state (due_at, task_id) WHERE due_at IS NOT NULL;

DROP INDEX tasks_due_idx;
ALTER TABLE tasks
  DROP COLUMN version,
  DROP COLUMN status,
  DROP COLUMN next_run_at,
  DROP COLUMN decided_through,
  DROP COLUMN admitted_count,
  DROP COLUMN run_count,
  DROP COLUMN defect_at,
  DROP COLUMN last_run_at,
  DROP COLUMN last_run_id,
  DROP COLUMN last_error;
`;
