/**
 * Migration 5 (issue 22): the run reason `excluded` (a stretch of nominal times on dates a schedule
 * excludes), and the `calendars` table. The reason CHECK is replaced without a rewrite: added NOT VALID,
 * then validated (a scan that blocks no reads or writes of `runs`). The list is a literal copy of the
 * domain's `RUN_REASONS` (a test keeps them equal).
 */
export const POSTGRES_MIGRATION_0005 = `
ALTER TABLE runs DROP CONSTRAINT runs_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_reason_check
  CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused', 'window',
                    'queue_timeout', 'launch_failed', 'target_failed', 'replica_lost',
                    'run_timeout', 'cancel_requested', 'superseded', 'task_paused',
                    'task_cancelled', 'task_deleted', 'target_cancelled', 'excluded')) NOT VALID;
ALTER TABLE runs VALIDATE CONSTRAINT runs_reason_check;

CREATE TABLE calendars (
  owner      text NOT NULL,
  name       text NOT NULL,
  items      jsonb NOT NULL,
  version    integer NOT NULL CONSTRAINT calendars_version_check CHECK (version >= 1),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT calendars_pkey PRIMARY KEY (owner, name)
);
`;
