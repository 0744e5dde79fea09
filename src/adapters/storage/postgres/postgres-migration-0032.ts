/**
 * Migration 32 (issue 30): fewer bytes of write-ahead log per fire, the same truths
 * (docs/storage.md#the-run-model-on-postgresql, docs/storage.md#the-statements-of-one-fire-and-their-wal).
 *
 * - `claim_slots`, a lease per taken slot of the budget, is rebuilt narrower. A run on a thread of its
 *   own (thread id = run id, most runs) stores its `thread_id` NULL, and the thread key is on
 *   `(thread_scope, COALESCE(thread_id, run_id))`: the same values as before, so it keeps one active
 *   run per thread. An exclusive run's task was stored twice (`task_id` beside `run_task_id`); it is now
 *   a flag, `exclusive`, and the task key is on `run_task_id WHERE exclusive`. `claimed_by` goes: no
 *   statement read it (the run's own `claimed_by` is the one the sweeps read). Every lease is copied.
 * - Both keys hold a 64-bit hash of their text (`hashtextextended`, the thread's scope length-prefixed so
 *   no two (scope, thread) pairs spell one text): an entry of 8 bytes instead of two ids' text. Equal
 *   threads (tasks) hash equal, so a key never lets a second active run in; two different ones hashing
 *   alike (about one chance in 10^11 for 10,000 leases) would only make a claim leave its run queued
 *   for a later one. Every lookup compares the hash (the key's expression) and the text itself.
 * - `task_state` is rebuilt with the columns a fire writes last and together: the verdict's (`status`,
 *   `run_count`, `last_run_at`, `last_run_id`; `last_error` before them, NULL after a success), then
 *   admission's (`next_run_at`, `due_at`, `decided_through`, `admitted_count`). PostgreSQL logs an
 *   update that stays on its page as the bytes between the longest prefix and suffix the new row shares
 *   with the old one; each update's span is now its own columns only. Every row is copied, with its
 *   keys, checks, the foreign key to `tasks` and `fillfactor = 30`.
 * - The triggers on `runs` find a run's lease by the new thread key (its thread and id), as before.
 *
 * One transaction (the runner's): both tables are copied whole while writes to them wait. `claim_slots`
 * holds at most a budget of rows; `task_state` one row per task.
 */
export const POSTGRES_MIGRATION_0032 = `
ALTER TABLE claim_slots RENAME TO claim_slots_before_32;
ALTER TABLE claim_slots_before_32 RENAME CONSTRAINT claim_slots_pkey TO claim_slots_before_32_pkey;
ALTER TABLE claim_slots_before_32 RENAME CONSTRAINT claim_slots_slot_check
  TO claim_slots_before_32_slot_check;
DROP INDEX claim_slots_thread_uq, claim_slots_task_uq;

CREATE TABLE claim_slots (
  slot         integer NOT NULL CHECK (slot >= 1),
  exclusive    boolean NOT NULL,
  run_id       text NOT NULL,
  thread_scope text NOT NULL,
  owner        text NOT NULL,
  run_task_id  text NOT NULL,
  thread_id    text CHECK (thread_id <> run_id),
  CONSTRAINT claim_slots_pkey PRIMARY KEY (slot)
) WITH (fillfactor = 100);

INSERT INTO claim_slots (slot, exclusive, run_id, thread_scope, owner, run_task_id, thread_id)
  SELECT slot, task_id IS NOT NULL, run_id, thread_scope, owner, run_task_id, NULLIF(thread_id, run_id)
    FROM claim_slots_before_32 ORDER BY slot;
DROP TABLE claim_slots_before_32;
CREATE UNIQUE INDEX claim_slots_thread_uq ON claim_slots
  ((hashtextextended(length(thread_scope)::text || ':' || thread_scope || COALESCE(thread_id, run_id), 0)));
CREATE UNIQUE INDEX claim_slots_task_uq ON claim_slots ((hashtextextended(run_task_id, 0))) WHERE exclusive;

ALTER TABLE task_state RENAME TO task_state_before_32;
ALTER TABLE task_state_before_32 RENAME CONSTRAINT task_state_pkey TO task_state_before_32_pkey;
ALTER TABLE task_state_before_32 RENAME CONSTRAINT task_state_status_check
  TO task_state_before_32_status_check;
ALTER TABLE task_state_before_32 RENAME CONSTRAINT task_state_task_id_fkey
  TO task_state_before_32_task_id_fkey;
DROP INDEX task_state_due_idx;

CREATE TABLE task_state (
  task_id         text NOT NULL,
  version         integer NOT NULL,
  defect_at       timestamptz,
  last_error      text,
  status          text NOT NULL CHECK (status IN ('enabled', 'paused', 'completed', 'failed', 'cancelled')),
  run_count       bigint NOT NULL DEFAULT 0,
  last_run_at     timestamptz,
  last_run_id     text,
  next_run_at     timestamptz,
  due_at          timestamptz GENERATED ALWAYS AS
    (CASE WHEN status = 'enabled' AND defect_at IS NULL THEN next_run_at END) STORED,
  decided_through timestamptz NOT NULL,
  admitted_count  bigint NOT NULL DEFAULT 0,
  CONSTRAINT task_state_pkey PRIMARY KEY (task_id),
  CONSTRAINT task_state_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE
) WITH (fillfactor = 30);

INSERT INTO task_state (task_id, version, defect_at, last_error, status, run_count, last_run_at,
                        last_run_id, next_run_at, decided_through, admitted_count)
  SELECT task_id, version, defect_at, last_error, status, run_count, last_run_at, last_run_id,
         next_run_at, decided_through, admitted_count
    FROM task_state_before_32 ORDER BY task_id;
DROP TABLE task_state_before_32;
CREATE INDEX task_state_due_idx ON task_state (due_at, task_id) WHERE due_at IS NOT NULL;

CREATE OR REPLACE FUNCTION runs_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted AS n WHERE n.status IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s WHERE s.thread_scope = n.thread_scope
                                   AND COALESCE(s.thread_id, s.run_id) = n.thread_id AND s.run_id = n.id)) THEN
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

CREATE OR REPLACE FUNCTION runs_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  -- Leases of runs that stopped being launching or running (by the thread key: the run's thread and id).
  DELETE FROM claim_slots AS s USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE s.thread_scope = o.thread_scope AND COALESCE(s.thread_id, s.run_id) = o.thread_id
     AND s.run_id = o.id
     AND o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running');
  -- A run that became launching or running holds a slot bound in the same statement (the claim's).
  IF EXISTS (SELECT 1 FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
              WHERE n.status IN ('launching', 'running') AND o.status NOT IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s WHERE s.thread_scope = n.thread_scope
                                   AND COALESCE(s.thread_id, s.run_id) = n.thread_id AND s.run_id = n.id)) THEN
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
    DELETE FROM claim_slots
     WHERE thread_scope = OLD.thread_scope AND COALESCE(thread_id, run_id) = OLD.thread_id
       AND run_id = OLD.id;
  ELSIF OLD.status = 'queued' THEN
    DELETE FROM run_ready WHERE owner = OLD.owner AND queued_at = OLD.queued_at AND run_id = OLD.id;
  ELSE
    DELETE FROM run_holds WHERE run_id = OLD.id;
  END IF;
  RETURN NULL;
END
$fn$;

ANALYZE claim_slots;
ANALYZE task_state;
`;
