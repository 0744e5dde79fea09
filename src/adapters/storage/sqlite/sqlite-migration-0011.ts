/**
 * SQLite migration 11 (issue 21): the run reason `quota` (a scheduled occurrence over its owner's admission
 * rate, docs/operations.md#quotas), an index to count an owner's recent runs, and a task's retiring signing
 * secret (docs/security.md#rotating-a-tasks-signing-secret). As in migration 6, SQLite cannot change a CHECK
 * constraint in place, so `runs` is rebuilt with the new list, keeping every column and index the
 * migrations before it made (migration 7's `target_kind`, migrations 7 and 9's indexes).
 */
export const SQLITE_MIGRATION_0011 = `
CREATE TABLE runs_next (
  id                  TEXT PRIMARY KEY,
  task_id             TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  owner               TEXT NOT NULL,
  "trigger"           TEXT NOT NULL CHECK ("trigger" IN ('scheduled', 'manual', 'backfill')),
  scheduled_for       INTEGER NOT NULL,
  fire_at             INTEGER NOT NULL,
  status              TEXT NOT NULL
                        CHECK (status IN ('queued', 'launching', 'running', 'succeeded', 'failed',
                                          'timed_out', 'cancelled', 'skipped', 'missed')),
  reason              TEXT
                        CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused',
                                          'window', 'queue_timeout', 'launch_failed', 'target_failed',
                                          'replica_lost', 'run_timeout', 'cancel_requested',
                                          'superseded', 'task_paused', 'task_cancelled',
                                          'task_deleted', 'target_cancelled', 'excluded',
                                          'non_retryable', 'invalid_input', 'quota')),
  missed_count        INTEGER,
  missed_until        INTEGER,
  attempt             INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  failures            INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
  not_before          INTEGER NOT NULL,
  thread_scope        TEXT NOT NULL,
  thread_id           TEXT NOT NULL,
  "exclusive"         INTEGER NOT NULL CHECK ("exclusive" IN (0, 1)),
  claim_token         TEXT,
  claim_expires_at    INTEGER,
  claimed_by          TEXT,
  target_run_id       TEXT,
  idempotency_key     TEXT NOT NULL,
  queued_at           INTEGER NOT NULL,
  launched_at         INTEGER,
  deadline_at         INTEGER,
  finished_at         INTEGER,
  lateness_ms         INTEGER,
  late                INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
  cancel_requested_at INTEGER,
  error               TEXT,
  result              TEXT CHECK (json_valid(result)),
  target_kind         TEXT
                        CHECK (target_kind IS NULL OR target_kind IN ('agent', 'webhook', 'handler'))
) STRICT;

INSERT INTO runs_next (id, task_id, owner, "trigger", scheduled_for, fire_at, status, reason, missed_count, missed_until, attempt, failures, not_before, thread_scope, thread_id, "exclusive", claim_token, claim_expires_at, claimed_by, target_run_id, idempotency_key, queued_at, launched_at, deadline_at, finished_at, lateness_ms, late, cancel_requested_at, error, result, target_kind)
  SELECT id, task_id, owner, "trigger", scheduled_for, fire_at, status, reason, missed_count, missed_until, attempt, failures, not_before, thread_scope, thread_id, "exclusive", claim_token, claim_expires_at, claimed_by, target_run_id, idempotency_key, queued_at, launched_at, deadline_at, finished_at, lateness_ms, late, cancel_requested_at, error, result, target_kind
  FROM runs;

DROP TABLE runs;

ALTER TABLE runs_next RENAME TO runs;

CREATE UNIQUE INDEX runs_scheduled_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE "trigger" = 'scheduled';
CREATE UNIQUE INDEX runs_backfill_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE "trigger" = 'backfill';
CREATE UNIQUE INDEX runs_manual_key_uq ON runs (task_id, idempotency_key)
  WHERE "trigger" = 'manual';
CREATE UNIQUE INDEX runs_task_slot_uq ON runs (task_id)
  WHERE "exclusive" = 1 AND status IN ('launching', 'running');
CREATE UNIQUE INDEX runs_thread_slot_uq ON runs (thread_scope, thread_id)
  WHERE status IN ('launching', 'running');
CREATE INDEX runs_queue_idx ON runs (queued_at, id)
  WHERE status = 'queued';
CREATE INDEX runs_active_task_idx ON runs (task_id)
  WHERE status IN ('queued', 'launching', 'running');
CREATE INDEX runs_claim_expiry_idx ON runs (claim_expires_at)
  WHERE status = 'launching';
CREATE INDEX runs_deadline_idx ON runs (deadline_at)
  WHERE status IN ('launching', 'running');
CREATE INDEX runs_history_idx ON runs (task_id, scheduled_for DESC, id DESC);
CREATE INDEX runs_retention_idx ON runs (finished_at)
  WHERE finished_at IS NOT NULL;
CREATE INDEX runs_owner_listing_idx
  ON runs (owner, status, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_owner_rare_idx ON runs (owner, scheduled_for DESC, id DESC)
  WHERE late = 1 OR "trigger" <> 'scheduled';
CREATE INDEX runs_owner_queue_idx ON runs (owner, queued_at, id)
  WHERE status = 'queued';
CREATE INDEX runs_thread_queue_idx ON runs (thread_scope, thread_id, queued_at, id)
  WHERE status = 'queued';
CREATE INDEX runs_thread_hold_idx ON runs (thread_scope, thread_id, deadline_at)
  WHERE status = 'cancelled' AND deadline_at IS NOT NULL;
CREATE INDEX runs_task_hold_idx ON runs (task_id, deadline_at)
  WHERE status = 'cancelled' AND deadline_at IS NOT NULL AND "exclusive" = 1;
CREATE INDEX runs_owner_queued_idx ON runs (owner, queued_at);

ALTER TABLE tasks ADD COLUMN retiring_secret TEXT;
ALTER TABLE tasks ADD COLUMN retiring_until INTEGER;
`;
