/**
 * Migration 28 (issue 30): fewer bytes of write-ahead log per fire, the same truths
 * (docs/storage.md#the-run-model-on-postgresql, docs/storage.md#the-statements-of-one-fire-and-their-wal).
 *
 * - `runs` is rebuilt with the columns a fire never changes first and the ones it writes (attempt,
 *   claim and launch instants, status, claim token, outcome) last, at `fillfactor = 30`. PostgreSQL logs a
 *   heap-only update as the bytes between the longest common prefix and suffix of the old and new row:
 *   with the mutable columns in the middle of the row that span was nearly the whole row (298 bytes per
 *   update); with them last it is the tail (165). At fillfactor 50 a page held the run's insert and one
 *   more version, so a third of the verdicts found no room and were logged whole with an entry in every
 *   index; at 30 all three versions fit. Every row, index, constraint and trigger is kept.
 *   `idempotency_key` may be NULL from now on for a scheduled or backfilled run whose key is the one
 *   derived from its task, trigger and instant (the store writes NULL then and derives it on read:
 *   about 70 bytes per run); a manual run's client key stays required. Rows already written keep theirs.
 * - `claim_slots` loses `claim_slots_run_uq`: a bound slot's thread key (`claim_slots_thread_uq`, every
 *   bound slot) already keeps a run to one slot, since a run has one thread, so a bind enters one index
 *   entry fewer. The slot of a run is found by its thread and id (that key) in the triggers below and in
 *   the fenced run write. `fillfactor = 10`: a bind and a release then find room on the slot's page, so
 *   neither is logged whole nor locks the old version in a record of its own.
 */
export const RUNS_REBUILT_0028 = `
ALTER TABLE runs RENAME TO runs_before_28;
ALTER TABLE runs_before_28 RENAME CONSTRAINT runs_pkey TO runs_before_28_pkey;
ALTER TABLE runs_before_28 RENAME CONSTRAINT runs_reason_check TO runs_before_28_reason_check;
ALTER TABLE runs_before_28 RENAME CONSTRAINT runs_status_check TO runs_before_28_status_check;
ALTER TABLE runs_before_28 RENAME CONSTRAINT runs_target_kind_check TO runs_before_28_target_kind_check;
ALTER TABLE runs_before_28 RENAME CONSTRAINT runs_trigger_check TO runs_before_28_trigger_check;
DROP INDEX runs_backfill_occurrence_uq, runs_history_idx, runs_manual_key_uq, runs_owner_listing_idx,
  runs_owner_rare_idx, runs_owner_requested_idx, runs_queued_at_idx, runs_scheduled_occurrence_uq;
DROP TRIGGER runs_deleted ON runs_before_28;
DROP TRIGGER runs_inserted ON runs_before_28;
DROP TRIGGER runs_moved ON runs_before_28;

CREATE TABLE runs (
  id                  text NOT NULL,
  task_id             text NOT NULL,
  owner               text NOT NULL,
  trigger             text NOT NULL,
  target_kind         text NOT NULL,
  scheduled_for       timestamptz NOT NULL,
  fire_at             timestamptz NOT NULL,
  queued_at           timestamptz NOT NULL,
  idempotency_key     text,
  thread_scope        text NOT NULL,
  thread_id           text NOT NULL,
  exclusive           boolean NOT NULL,
  missed_count        integer,
  missed_until        timestamptz,
  late                boolean NOT NULL DEFAULT false,
  lateness_ms         bigint,
  not_before          timestamptz NOT NULL,
  attempt             integer NOT NULL DEFAULT 0,
  failures            integer NOT NULL DEFAULT 0,
  claim_expires_at    timestamptz,
  launched_at         timestamptz,
  deadline_at         timestamptz,
  finished_at         timestamptz,
  cancel_requested_at timestamptz,
  status              text NOT NULL,
  reason              text,
  claimed_by          text,
  claim_token         text,
  target_run_id       text,
  error               text,
  result              jsonb,
  CONSTRAINT runs_pkey PRIMARY KEY (id),
  CONSTRAINT runs_reason_check CHECK (reason = ANY (ARRAY['overlap', 'coalesced', 'buffer_full', 'down',
    'paused', 'window', 'queue_timeout', 'launch_failed', 'target_failed', 'replica_lost', 'run_timeout',
    'cancel_requested', 'superseded', 'task_paused', 'task_cancelled', 'task_deleted', 'target_cancelled',
    'excluded', 'non_retryable', 'invalid_input', 'quota', 'no_handler'])),
  CONSTRAINT runs_status_check CHECK (status = ANY (ARRAY['queued', 'launching', 'running', 'succeeded',
    'failed', 'timed_out', 'cancelled', 'skipped', 'missed'])),
  CONSTRAINT runs_target_kind_check CHECK (target_kind = ANY (ARRAY['agent', 'webhook', 'handler'])),
  CONSTRAINT runs_trigger_check CHECK (trigger = ANY (ARRAY['scheduled', 'manual', 'backfill'])),
  CONSTRAINT runs_manual_key_check CHECK (trigger <> 'manual' OR idempotency_key IS NOT NULL)
) WITH (fillfactor = 30);

INSERT INTO runs (id, task_id, owner, trigger, target_kind, scheduled_for, fire_at, queued_at,
    idempotency_key, thread_scope, thread_id, exclusive, missed_count, missed_until, late, lateness_ms,
    not_before, attempt, failures, claim_expires_at, launched_at, deadline_at, finished_at,
    cancel_requested_at, status, reason, claimed_by, claim_token, target_run_id, error, result)
  SELECT id, task_id, owner, trigger, target_kind, scheduled_for, fire_at, queued_at,
    idempotency_key, thread_scope, thread_id, exclusive, missed_count, missed_until, late, lateness_ms,
    not_before, attempt, failures, claim_expires_at, launched_at, deadline_at, finished_at,
    cancel_requested_at, status, reason, claimed_by, claim_token, target_run_id, error, result
    FROM runs_before_28 ORDER BY queued_at, id;
DROP TABLE runs_before_28;

CREATE UNIQUE INDEX runs_scheduled_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE trigger = 'scheduled';
CREATE UNIQUE INDEX runs_backfill_occurrence_uq ON runs (task_id, scheduled_for)
  WHERE trigger = 'backfill';
CREATE UNIQUE INDEX runs_manual_key_uq ON runs (task_id, idempotency_key) WHERE trigger = 'manual';
CREATE INDEX runs_history_idx ON runs (task_id, scheduled_for DESC, id DESC);
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_owner_rare_idx ON runs (owner, scheduled_for DESC, id DESC)
  WHERE late OR trigger <> 'scheduled';
CREATE INDEX runs_owner_requested_idx ON runs (owner, queued_at) WHERE trigger <> 'scheduled';
CREATE INDEX runs_queued_at_idx ON runs (queued_at);

CREATE TRIGGER runs_inserted AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION runs_inserted();
CREATE TRIGGER runs_moved AFTER UPDATE ON runs
  REFERENCING OLD TABLE AS moved_old NEW TABLE AS moved_new
  FOR EACH STATEMENT EXECUTE FUNCTION runs_moved();
CREATE TRIGGER runs_deleted AFTER DELETE ON runs FOR EACH ROW
  WHEN (OLD.status IN ('queued', 'launching', 'running')
        OR (OLD.status = 'cancelled' AND OLD.deadline_at IS NOT NULL))
  EXECUTE FUNCTION runs_deleted();
ANALYZE runs;
`;

/** A run's slot found by its thread key; one index entry fewer per bind; room on the slots' pages. */
export const SLOTS_0028 = `
DROP INDEX claim_slots_run_uq;
ALTER TABLE claim_slots SET (fillfactor = 10);
CLUSTER claim_slots USING claim_slots_pkey;
ALTER TABLE claim_slots SET WITHOUT CLUSTER;

CREATE OR REPLACE FUNCTION runs_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  -- Slots of runs that stopped being launching or running (by the thread key: the run's thread and id).
  UPDATE claim_slots AS s SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
    owner = NULL, claimed_by = NULL, run_task_id = NULL
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE s.thread_scope = o.thread_scope AND s.thread_id = o.thread_id AND s.run_id = o.id
     AND o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running');
  -- A run that became launching or running holds a slot bound in the same statement (the claim's).
  IF EXISTS (SELECT 1 FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
              WHERE n.status IN ('launching', 'running') AND o.status NOT IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s WHERE s.thread_scope = n.thread_scope
                                   AND s.thread_id = n.thread_id AND s.run_id = n.id)) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  -- The queue: out when a run leaves queued, in when it comes back (a retry, a redrive); a queued
  -- run's row is found by its claim key (owner, queue instant, id).
  DELETE FROM run_ready AS q USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE q.owner = o.owner AND q.queued_at = o.queued_at AND q.run_id = o.id
     AND o.status = 'queued' AND n.status <> 'queued';
  INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
    SELECT n.id, n.owner, n.task_id, CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
           CASE WHEN n.thread_id <> n.id THEN n.thread_id END, n.exclusive, n.queued_at, n.not_before
      FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE n.status = 'queued' AND o.status <> 'queued';
  UPDATE run_ready AS q SET thread_scope = CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
    thread_id = CASE WHEN n.thread_id <> n.id THEN n.thread_id END,
    exclusive = n.exclusive, queued_at = n.queued_at, not_before = n.not_before
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE q.owner = o.owner AND q.queued_at = o.queued_at AND q.run_id = o.id
     AND o.status = 'queued' AND n.status = 'queued'
     AND (o.thread_scope, o.thread_id, o.exclusive, o.queued_at, o.not_before)
         IS DISTINCT FROM (n.thread_scope, n.thread_id, n.exclusive, n.queued_at, n.not_before);
  -- Holds: a cancelled run with a deadline holds its thread (and exclusive task) until then.
  DELETE FROM run_holds AS h USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE h.run_id = o.id AND o.status = 'cancelled' AND o.deadline_at IS NOT NULL
     AND NOT (n.status = 'cancelled' AND n.deadline_at IS NOT NULL);
  INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
    SELECT n.id, n.thread_scope, n.thread_id, CASE WHEN n.exclusive THEN n.task_id END, n.deadline_at
      FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE n.status = 'cancelled' AND n.deadline_at IS NOT NULL
       AND (o.status, o.deadline_at, o.thread_scope, o.thread_id, o.exclusive)
           IS DISTINCT FROM (n.status, n.deadline_at, n.thread_scope, n.thread_id, n.exclusive)
  ON CONFLICT (run_id) DO UPDATE SET thread_scope = excluded.thread_scope,
    thread_id = excluded.thread_id, task_id = excluded.task_id, deadline_at = excluded.deadline_at;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION runs_deleted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF OLD.status IN ('launching', 'running') THEN
    UPDATE claim_slots SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
      owner = NULL, claimed_by = NULL, run_task_id = NULL
     WHERE thread_scope = OLD.thread_scope AND thread_id = OLD.thread_id AND run_id = OLD.id;
  ELSIF OLD.status = 'queued' THEN
    DELETE FROM run_ready WHERE owner = OLD.owner AND queued_at = OLD.queued_at AND run_id = OLD.id;
  ELSE
    DELETE FROM run_holds WHERE run_id = OLD.id;
  END IF;
  RETURN NULL;
END
$fn$;
`;

/**
 * `run_ready` keyed by its claim order only: `run_ready_owner_queue_idx` becomes unique (a queued run's
 * owner and queue instant are its own, so its id appears once) and the primary key on `run_id` goes, one
 * index entry fewer per fire; every writer finds a run's row by that key (the triggers have the run's
 * owner and queue instant), and the claim's probe of a run-named thread reads `runs` by primary key.
 * A queued run's thread is written in `run_ready` only for a shared thread (the one case the thread's
 * FIFO index holds; a run on a thread of its own is its thread's only run): 50-odd bytes fewer per row.
 * `claim_slots_owner_idx` goes too: the claim counts each owner's slots in one pass over the slots
 * (at most one row per slot of the budget), as it already counts the room.
 */
export const QUEUE_KEYS_0028 = `
ALTER TABLE run_ready DROP CONSTRAINT run_ready_pkey;
ALTER TABLE run_ready ALTER COLUMN thread_scope DROP NOT NULL, ALTER COLUMN thread_id DROP NOT NULL;
UPDATE run_ready SET thread_scope = NULL, thread_id = NULL WHERE thread_id = run_id;

CREATE OR REPLACE FUNCTION runs_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted AS n WHERE n.status IN ('launching', 'running')) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
    SELECT n.id, n.owner, n.task_id, CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
           CASE WHEN n.thread_id <> n.id THEN n.thread_id END, n.exclusive, n.queued_at, n.not_before
      FROM inserted AS n WHERE n.status = 'queued';
  INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
    SELECT n.id, n.thread_scope, n.thread_id, CASE WHEN n.exclusive THEN n.task_id END, n.deadline_at
      FROM inserted AS n WHERE n.status = 'cancelled' AND n.deadline_at IS NOT NULL;
  RETURN NULL;
END
$fn$;
DROP INDEX run_ready_owner_queue_idx;
CREATE UNIQUE INDEX run_ready_owner_queue_idx ON run_ready (owner, queued_at, run_id);
DROP INDEX claim_slots_owner_idx;
`;

export const POSTGRES_MIGRATION_0028 = RUNS_REBUILT_0028 + SLOTS_0028 + QUEUE_KEYS_0028;
