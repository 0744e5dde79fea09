/**
 * Migration 31 (issue 30): a budget slot is a lease row, inserted by the claim that binds it and deleted
 * when its run stops being launching or running (docs/storage.md#the-run-model-on-postgresql). A slot
 * was a row per number of the budget, bound and freed by two updates: each a new row version, a new
 * primary-key entry (neither update is heap-only: they change the thread and task keys) and, for a slot
 * found `SKIP LOCKED`, a lock record; about 750 bytes of write-ahead log per fire. A lease is one insert
 * (its row and its keys' entries) and one delete (a few dozen bytes, no index entry).
 *
 * - `claim_slots` keeps its name, columns and keys; its rows are now the bound slots only. The unbound
 *   rows are deleted; every bound slot (every launching or running run's) is kept as it is, so every run
 *   keeps its slot. A row's run, thread, owner and run task are NOT NULL (the bound check goes).
 * - The budget stays exact and in the database: the slot number is the primary key, the claim inserts
 *   only numbers 1..budget not taken (a lowered budget's higher numbers drain, none is taken again), and
 *   a number two replicas chose at once is inserted by one (`ON CONFLICT DO NOTHING`: the other's run
 *   is not written launching, in the same statement). The thread and task keys keep one active run per
 *   thread and per exclusive task as before.
 * - The triggers on `runs` delete a run's lease (found by its thread key and id) where they freed its
 *   slot; `runs_inserted`' check (an active run holds a slot) is unchanged.
 * - `fillfactor` back to 100: a lease is never updated, so no room is kept for a second version.
 */
export const POSTGRES_MIGRATION_0031 = `
DELETE FROM claim_slots WHERE run_id IS NULL;
ALTER TABLE claim_slots DROP CONSTRAINT claim_slots_bound_check;
ALTER TABLE claim_slots ALTER COLUMN run_id SET NOT NULL, ALTER COLUMN thread_scope SET NOT NULL,
  ALTER COLUMN thread_id SET NOT NULL, ALTER COLUMN owner SET NOT NULL,
  ALTER COLUMN run_task_id SET NOT NULL;
ALTER TABLE claim_slots SET (fillfactor = 100);
CLUSTER claim_slots USING claim_slots_pkey;
ALTER TABLE claim_slots SET WITHOUT CLUSTER;

CREATE OR REPLACE FUNCTION runs_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  -- Leases of runs that stopped being launching or running (by the thread key: the run's thread and id).
  DELETE FROM claim_slots AS s USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
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
    DELETE FROM claim_slots
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
