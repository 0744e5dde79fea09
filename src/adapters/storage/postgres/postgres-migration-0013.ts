/**
 * Migration 13 (issue 21): the run reason `quota` (a scheduled occurrence over its owner's admission rate,
 * docs/operations.md#quotas), an index to count an owner's recent runs, and a task's retiring signing
 * secret (docs/security.md#rotating-a-tasks-signing-secret). The reason CHECK is replaced as in migration
 * 8; the list is a literal copy of the domain's `RUN_REASONS` (a test keeps them equal).
 */
export const POSTGRES_MIGRATION_0013 = `
ALTER TABLE runs DROP CONSTRAINT runs_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_reason_check
  CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused', 'window',
                    'queue_timeout', 'launch_failed', 'target_failed', 'replica_lost',
                    'run_timeout', 'cancel_requested', 'superseded', 'task_paused',
                    'task_cancelled', 'task_deleted', 'target_cancelled', 'excluded',
                    'non_retryable', 'invalid_input', 'quota')) NOT VALID;
ALTER TABLE runs VALIDATE CONSTRAINT runs_reason_check;
CREATE INDEX runs_owner_queued_idx ON runs (owner, queued_at);
ALTER TABLE tasks ADD COLUMN retiring_secret text;
ALTER TABLE tasks ADD COLUMN retiring_until timestamptz;
`;
