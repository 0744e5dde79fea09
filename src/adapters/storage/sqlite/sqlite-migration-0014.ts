/**
 * SQLite migration 14 (issue 32): each replica's heartbeat row carries the handler names it serves (a JSON
 * array, docs/deploy.md#handler-names), and `runs.reason` admits `no_handler` (docs/semantics.md#reasons).
 * As in migration 13, the CHECK is changed by replacing the column (a rebuild of `runs` would have to
 * repeat every index): a new column with the new list takes the values, the old one is dropped, and the
 * new one takes its name. The list is a literal copy of the domain's `RUN_REASONS` (a test keeps them equal).
 */
export const SQLITE_MIGRATION_0014 = `
ALTER TABLE replicas ADD COLUMN handler_names TEXT CHECK (json_valid(handler_names));
ALTER TABLE runs ADD COLUMN reason_next TEXT
  CHECK (reason_next IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused',
                         'window', 'queue_timeout', 'launch_failed', 'target_failed',
                         'replica_lost', 'run_timeout', 'cancel_requested',
                         'superseded', 'task_paused', 'task_cancelled',
                         'task_deleted', 'target_cancelled', 'excluded',
                         'non_retryable', 'invalid_input', 'quota', 'no_handler'));
UPDATE runs SET reason_next = reason WHERE reason IS NOT NULL;
ALTER TABLE runs DROP COLUMN reason;
ALTER TABLE runs RENAME COLUMN reason_next TO reason;
`;
