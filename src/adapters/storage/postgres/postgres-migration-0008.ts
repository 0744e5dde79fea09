/**
 * Migration 8 (issue 16): the run reasons `non_retryable` (a handler failed its run and asked for no
 * retry) and `invalid_input` (the input no longer matched the handler's schema at launch). The reason
 * CHECK is replaced as in migration 5: added NOT VALID, then validated. The list is a literal copy of
 * the domain's `RUN_REASONS` (a test keeps them equal).
 */
export const POSTGRES_MIGRATION_0008 = `
ALTER TABLE runs DROP CONSTRAINT runs_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_reason_check
  CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused', 'window',
                    'queue_timeout', 'launch_failed', 'target_failed', 'replica_lost',
                    'run_timeout', 'cancel_requested', 'superseded', 'task_paused',
                    'task_cancelled', 'task_deleted', 'target_cancelled', 'excluded',
                    'non_retryable', 'invalid_input')) NOT VALID;
ALTER TABLE runs VALIDATE CONSTRAINT runs_reason_check;
`;
