/**
 * SQLite migration 7 (issue 19): runs across tasks (docs/storage.md#runs-across-tasks). The run keeps the
 * kind of its task's target (`target_kind`, written with the row from the task, copied here for the rows
 * that exist), and two indexes led by owner serve the listing's filters, as PostgreSQL migration 9:
 * one ordered range per status and kind, and the rare late, manual and backfill runs (a finished-time
 * range walks `runs_retention_idx`). A column added by `ALTER TABLE` cannot be `NOT NULL` without a default, so the CHECK
 * allows null only for a row written before this migration (none is, after the copy).
 */
export const SQLITE_MIGRATION_0007 = `
ALTER TABLE runs ADD COLUMN target_kind TEXT
  CHECK (target_kind IS NULL OR target_kind IN ('agent', 'webhook', 'handler'));
UPDATE runs SET target_kind = (SELECT t.target_kind FROM tasks t WHERE t.id = runs.task_id);

CREATE INDEX runs_owner_listing_idx
  ON runs (owner, status, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_owner_rare_idx ON runs (owner, scheduled_for DESC, id DESC)
  WHERE late = 1 OR "trigger" <> 'scheduled';
`;
