/**
 * Migration 9 (issue 19): runs across tasks (docs/storage.md#runs-across-tasks). The run keeps the kind
 * of its task's target (`target_kind`, written with the row from the task, copied here for the rows that
 * exist), and two indexes led by owner serve the listing's filters, newest first:
 * - `runs_owner_listing_idx (owner, status, target_kind, scheduled_for DESC, id DESC)`: one ordered
 *   range per status and kind, merged (the owner's listing, and status, kind and scheduled-time filters);
 * - `runs_owner_rare_idx (owner, scheduled_for DESC, id DESC)` over late, manual and backfill runs only
 *   (rare rows, so a small index that costs a write only for them): `late` and non-scheduled triggers.
 * A task's runs are found through `runs_history_idx` and a finished-time range through
 * `runs_retention_idx (finished_at)`, as before: a third index for the finished range would cost every
 * run write for a read that the time range already bounds. The copy rewrites every row of `runs` once,
 * in this migration's transaction.
 */
export const POSTGRES_MIGRATION_0009 = `
ALTER TABLE runs ADD COLUMN target_kind text;
UPDATE runs AS r SET target_kind = t.target_kind FROM tasks AS t WHERE t.id = r.task_id;
ALTER TABLE runs ALTER COLUMN target_kind SET NOT NULL;
ALTER TABLE runs ADD CONSTRAINT runs_target_kind_check
  CHECK (target_kind IN ('agent', 'webhook', 'handler'));

CREATE INDEX runs_owner_listing_idx
  ON runs (owner, status, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_owner_rare_idx ON runs (owner, scheduled_for DESC, id DESC)
  WHERE late OR trigger <> 'scheduled';
`;
