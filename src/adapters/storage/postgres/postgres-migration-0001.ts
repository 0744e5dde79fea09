/**
 * Migration 1: the initial schema (tasks, runs, replicas, API tokens, API idempotency records). Forward-only
 * and never edited once merged: its sha256 is recorded in `schema_migrations` and checked at every start.
 * Runs with `search_path` set to the store's schema, so names here are unqualified. The CHECK lists are
 * literal copies of the domain's `as const` lists (a test keeps them equal); a new value needs a new migration.
 */
export const POSTGRES_MIGRATION_0001 = `
CREATE TABLE tasks (
  id              text PRIMARY KEY,
  owner           text NOT NULL,
  title           text NOT NULL,
  description     text,
  schedule        jsonb NOT NULL,
  schedule_type   text NOT NULL CONSTRAINT tasks_schedule_type_check
                    CHECK (schedule_type IN ('cron', 'once', 'interval')),
  target          jsonb NOT NULL,
  target_kind     text NOT NULL CONSTRAINT tasks_target_kind_check
                    CHECK (target_kind IN ('agent', 'webhook', 'handler')),
  handler_name    text,
  context         jsonb NOT NULL,
  thread_scope    text NOT NULL,
  thread_id       text,
  options         jsonb NOT NULL,
  metadata        jsonb NOT NULL,
  status          text NOT NULL CONSTRAINT tasks_status_check
                    CHECK (status IN ('enabled', 'paused', 'completed', 'failed', 'cancelled')),
  next_run_at     timestamptz,
  decided_through timestamptz NOT NULL,
  admitted_count  bigint NOT NULL DEFAULT 0,
  last_run_at     timestamptz,
  last_run_id     text,
  last_error      text,
  run_count       bigint NOT NULL DEFAULT 0,
  version         integer NOT NULL,
  webhook_secret  text NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  deleted_at      timestamptz
);

CREATE INDEX tasks_due_idx ON tasks (next_run_at)
  WHERE status = 'enabled' AND deleted_at IS NULL;
CREATE INDEX tasks_owner_idx ON tasks (owner, created_at, id);
CREATE INDEX tasks_thread_idx ON tasks (owner, thread_scope, thread_id)
  WHERE thread_id IS NOT NULL;

CREATE TABLE runs (
  id                  text PRIMARY KEY,
  task_id             text NOT NULL CONSTRAINT runs_task_fk REFERENCES tasks (id) ON DELETE CASCADE,
  owner               text NOT NULL,
  trigger             text NOT NULL CONSTRAINT runs_trigger_check
                        CHECK (trigger IN ('scheduled', 'manual', 'backfill')),
  scheduled_for       timestamptz NOT NULL,
  fire_at             timestamptz NOT NULL,
  status              text NOT NULL CONSTRAINT runs_status_check
                        CHECK (status IN ('queued', 'launching', 'running', 'succeeded', 'failed',
                                          'timed_out', 'cancelled', 'skipped', 'missed')),
  reason              text CONSTRAINT runs_reason_check
                        CHECK (reason IN ('overlap', 'coalesced', 'buffer_full', 'down', 'paused',
                                          'window', 'queue_timeout', 'launch_failed', 'target_failed',
                                          'replica_lost', 'run_timeout', 'cancel_requested',
                                          'superseded', 'task_paused', 'task_cancelled',
                                          'task_deleted', 'target_cancelled')),
  missed_count        integer,
  missed_until        timestamptz,
  attempt             integer NOT NULL DEFAULT 0,
  failures            integer NOT NULL DEFAULT 0,
  not_before          timestamptz NOT NULL,
  thread_scope        text NOT NULL,
  thread_id           text NOT NULL,
  exclusive           boolean NOT NULL,
  claim_token         text,
  claim_expires_at    timestamptz,
  claimed_by          text,
  target_run_id       text,
  idempotency_key     text NOT NULL,
  queued_at           timestamptz NOT NULL,
  launched_at         timestamptz,
  deadline_at         timestamptz,
  finished_at         timestamptz,
  lateness_ms         bigint,
  late                boolean NOT NULL DEFAULT false,
  cancel_requested_at timestamptz,
  error               text,
  result              jsonb
);

CREATE UNIQUE INDEX runs_scheduled_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE trigger = 'scheduled';
CREATE UNIQUE INDEX runs_backfill_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE trigger = 'backfill';
CREATE UNIQUE INDEX runs_manual_key_uq ON runs (task_id, idempotency_key)
  WHERE trigger = 'manual';
CREATE UNIQUE INDEX runs_task_slot_uq ON runs (task_id)
  WHERE exclusive AND status IN ('launching', 'running');
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
  id           text PRIMARY KEY,
  started_at   timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

CREATE TABLE api_tokens (
  id         text PRIMARY KEY,
  token_hash text NOT NULL CONSTRAINT api_tokens_token_hash_uq UNIQUE,
  owner      text NOT NULL,
  is_admin   boolean NOT NULL DEFAULT false,
  label      text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE TABLE idempotency_records (
  owner        text NOT NULL,
  route        text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  status_code  integer NOT NULL,
  response     jsonb NOT NULL,
  created_at   timestamptz NOT NULL,
  CONSTRAINT idempotency_records_pkey PRIMARY KEY (owner, route, key)
);
`;
