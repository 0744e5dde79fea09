/**
 * SQLite migration 1: the initial schema (tasks, runs, replicas, API tokens, API idempotency records).
 * Forward-only and never edited once merged: its sha256 is recorded in `schema_migrations` and checked at
 * every start. STRICT tables: instants are INTEGER epoch ms, booleans INTEGER 0/1, JSON is TEXT checked by
 * `json_valid`. The CHECK lists are literal copies of the domain's `as const` lists (a test keeps them
 * equal), so that a new value needs a new migration instead of silently changing this one's checksum.
 */
export const SQLITE_MIGRATION_0001 = `
CREATE TABLE tasks (
  id              TEXT PRIMARY KEY,
  owner           TEXT NOT NULL,
  title           TEXT NOT NULL,
  description     TEXT,
  schedule        TEXT NOT NULL CHECK (json_valid(schedule)),
  schedule_type   TEXT NOT NULL CHECK (schedule_type IN ('cron', 'once', 'interval')),
  target          TEXT NOT NULL CHECK (json_valid(target)),
  target_kind     TEXT NOT NULL CHECK (target_kind IN ('agent', 'webhook', 'handler')),
  handler_name    TEXT,
  context         TEXT NOT NULL CHECK (json_valid(context)),
  thread_scope    TEXT NOT NULL,
  thread_id       TEXT,
  options         TEXT NOT NULL CHECK (json_valid(options)),
  metadata        TEXT NOT NULL CHECK (json_valid(metadata)),
  status          TEXT NOT NULL
                    CHECK (status IN ('enabled', 'paused', 'completed', 'failed', 'cancelled')),
  next_run_at     INTEGER,
  decided_through INTEGER NOT NULL,
  admitted_count  INTEGER NOT NULL DEFAULT 0 CHECK (admitted_count >= 0),
  last_run_at     INTEGER,
  last_run_id     TEXT,
  last_error      TEXT,
  run_count       INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0),
  version         INTEGER NOT NULL,
  webhook_secret  TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  deleted_at      INTEGER
) STRICT;

CREATE INDEX tasks_due_idx ON tasks (next_run_at)
  WHERE status = 'enabled' AND deleted_at IS NULL;
CREATE INDEX tasks_owner_idx ON tasks (owner, created_at, id);
CREATE INDEX tasks_thread_idx ON tasks (owner, thread_scope, thread_id)
  WHERE thread_id IS NOT NULL;
CREATE INDEX tasks_deleted_idx ON tasks (deleted_at, id)
  WHERE deleted_at IS NOT NULL;

CREATE TABLE runs (
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
                                          'task_deleted', 'target_cancelled')),
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
  result              TEXT CHECK (json_valid(result))
) STRICT;

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

CREATE TABLE replicas (
  id           TEXT PRIMARY KEY,
  started_at   INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_tokens (
  id         TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  owner      TEXT NOT NULL,
  is_admin   INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  label      TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;

CREATE UNIQUE INDEX api_tokens_token_hash_uq ON api_tokens (token_hash);

CREATE TABLE idempotency_records (
  owner        TEXT NOT NULL,
  route        TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status_code  INTEGER NOT NULL,
  response     TEXT NOT NULL CHECK (json_valid(response)),
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (owner, route, key)
) STRICT;
`;
