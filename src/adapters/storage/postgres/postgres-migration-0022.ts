/**
 * Migration 22 (issue 32): each replica's heartbeat row carries the handler names it serves
 * (docs/deploy.md#handler-names), so an API-only process accepts them and a queued handler run that no
 * live replica serves ends `failed` with the run reason `no_handler` (docs/semantics.md#reasons). The
 * reason CHECK is replaced as in migration 13; the list is a literal copy of the domain's `RUN_REASONS`
 * (a test keeps them equal).
 */
export const POSTGRES_MIGRATION_0022 = `
ALTER TABLE replicas ADD COLUMN handler_names text[];
ALTER TABLE runs DROP CONSTRAINT runs_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_reason_check
  CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused', 'window',
                    'queue_timeout', 'launch_failed', 'target_failed', 'replica_lost',
                    'run_timeout', 'cancel_requested', 'superseded', 'task_paused',
                    'task_cancelled', 'task_deleted', 'target_cancelled', 'excluded',
                    'non_retryable', 'invalid_input', 'quota', 'no_handler')) NOT VALID;
ALTER TABLE runs VALIDATE CONSTRAINT runs_reason_check;
`;
