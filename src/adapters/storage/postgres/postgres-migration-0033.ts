/**
 * Migration 33 (issue 30): the triggers on `runs` run only the statements a write needs
 * (docs/storage.md#the-run-model-on-postgresql). `runs_moved` ran its seven statements for every update
 * of `runs`, each joining the statement's old and new rows again, though a verdict batch needs only the
 * leases' delete and a claim only the queue's delete and the lease check; `runs_inserted` likewise ran
 * its three. Each now reads its transition tables once for which moves the statement made, and runs the
 * statements for those: the same rows written, the same check, fewer statements planned and run (each
 * backend plans each statement of a function on its first call). A lease is found by its thread key's
 * hash as well as by its text, as the claim finds it (`leaseOnThread` in postgres-claim.ts): migration 32's
 * triggers compared the text only, which `claim_slots_thread_uq`, on the hash, cannot serve (no index
 * did: the leases were read whole, a budget's worth at most). Only the functions change: every run is kept as it is.
 */
export const POSTGRES_MIGRATION_0033 = `
CREATE OR REPLACE FUNCTION runs_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
DECLARE
  active boolean;
  queued boolean;
  held boolean;
BEGIN
  SELECT bool_or(n.status IN ('launching', 'running')), bool_or(n.status = 'queued'),
         bool_or(n.status = 'cancelled' AND n.deadline_at IS NOT NULL)
    INTO active, queued, held
    FROM inserted AS n;
  IF active AND EXISTS (SELECT 1 FROM inserted AS n WHERE n.status IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s
                                 WHERE hashtextextended(length(s.thread_scope)::text || ':' || s.thread_scope || COALESCE(s.thread_id, s.run_id), 0)
                                       = hashtextextended(length(n.thread_scope)::text || ':' || n.thread_scope || n.thread_id, 0)
                                   AND s.thread_scope = n.thread_scope
                                   AND COALESCE(s.thread_id, s.run_id) = n.thread_id AND s.run_id = n.id)) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  IF queued THEN
    INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
      SELECT n.id, n.owner, n.task_id, CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
             CASE WHEN n.thread_id <> n.id THEN n.thread_id END, n.exclusive, n.queued_at, n.not_before
        FROM inserted AS n WHERE n.status = 'queued';
  END IF;
  IF held THEN
    INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
      SELECT n.id, n.thread_scope, n.thread_id, CASE WHEN n.exclusive THEN n.task_id END, n.deadline_at
        FROM inserted AS n WHERE n.status = 'cancelled' AND n.deadline_at IS NOT NULL;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION runs_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
DECLARE
  freed boolean;
  taken boolean;
  dequeued boolean;
  enqueued boolean;
  requeued boolean;
  unheld boolean;
  held boolean;
BEGIN
  -- Which moves the statement made, in one pass over its rows (NULL, taken as false, when it wrote none).
  SELECT bool_or(o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running')),
         bool_or(n.status IN ('launching', 'running') AND o.status NOT IN ('launching', 'running')),
         bool_or(o.status = 'queued' AND n.status <> 'queued'),
         bool_or(n.status = 'queued' AND o.status <> 'queued'),
         bool_or(o.status = 'queued' AND n.status = 'queued'),
         bool_or(o.status = 'cancelled' AND o.deadline_at IS NOT NULL),
         bool_or(n.status = 'cancelled' AND n.deadline_at IS NOT NULL)
    INTO freed, taken, dequeued, enqueued, requeued, unheld, held
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id;
  -- Leases of runs that stopped being launching or running (by the thread key: the run's thread and id).
  IF freed THEN
    DELETE FROM claim_slots AS s USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE hashtextextended(length(s.thread_scope)::text || ':' || s.thread_scope || COALESCE(s.thread_id, s.run_id), 0)
           = hashtextextended(length(o.thread_scope)::text || ':' || o.thread_scope || o.thread_id, 0)
       AND s.thread_scope = o.thread_scope AND COALESCE(s.thread_id, s.run_id) = o.thread_id
       AND s.run_id = o.id
       AND o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running');
  END IF;
  -- A run that became launching or running holds a slot bound in the same statement (the claim's).
  IF taken AND EXISTS (SELECT 1 FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
              WHERE n.status IN ('launching', 'running') AND o.status NOT IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s
                                 WHERE hashtextextended(length(s.thread_scope)::text || ':' || s.thread_scope || COALESCE(s.thread_id, s.run_id), 0)
                                       = hashtextextended(length(n.thread_scope)::text || ':' || n.thread_scope || n.thread_id, 0)
                                   AND s.thread_scope = n.thread_scope
                                   AND COALESCE(s.thread_id, s.run_id) = n.thread_id AND s.run_id = n.id)) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  -- The queue: out when a run leaves queued, in when it comes back (a retry, a redrive); a queued
  -- run's row is found by its claim key (owner, queue instant, id).
  IF dequeued THEN
    DELETE FROM run_ready AS q USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE q.owner = o.owner AND q.queued_at = o.queued_at AND q.run_id = o.id
       AND o.status = 'queued' AND n.status <> 'queued';
  END IF;
  IF enqueued THEN
    INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
      SELECT n.id, n.owner, n.task_id, CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
             CASE WHEN n.thread_id <> n.id THEN n.thread_id END, n.exclusive, n.queued_at, n.not_before
        FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
       WHERE n.status = 'queued' AND o.status <> 'queued';
  END IF;
  IF requeued THEN
    UPDATE run_ready AS q SET thread_scope = CASE WHEN n.thread_id <> n.id THEN n.thread_scope END,
      thread_id = CASE WHEN n.thread_id <> n.id THEN n.thread_id END,
      exclusive = n.exclusive, queued_at = n.queued_at, not_before = n.not_before
      FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE q.owner = o.owner AND q.queued_at = o.queued_at AND q.run_id = o.id
       AND o.status = 'queued' AND n.status = 'queued'
       AND (o.thread_scope, o.thread_id, o.exclusive, o.queued_at, o.not_before)
           IS DISTINCT FROM (n.thread_scope, n.thread_id, n.exclusive, n.queued_at, n.not_before);
  END IF;
  -- Holds: a cancelled run with a deadline holds its thread (and exclusive task) until then.
  IF unheld THEN
    DELETE FROM run_holds AS h USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE h.run_id = o.id AND o.status = 'cancelled' AND o.deadline_at IS NOT NULL
       AND NOT (n.status = 'cancelled' AND n.deadline_at IS NOT NULL);
  END IF;
  IF held THEN
    INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
      SELECT n.id, n.thread_scope, n.thread_id, CASE WHEN n.exclusive THEN n.task_id END, n.deadline_at
        FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
       WHERE n.status = 'cancelled' AND n.deadline_at IS NOT NULL
         AND (o.status, o.deadline_at, o.thread_scope, o.thread_id, o.exclusive)
             IS DISTINCT FROM (n.status, n.deadline_at, n.thread_scope, n.thread_id, n.exclusive)
    ON CONFLICT (run_id) DO UPDATE SET thread_scope = excluded.thread_scope,
      thread_id = excluded.thread_id, task_id = excluded.task_id, deadline_at = excluded.deadline_at;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION runs_deleted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF OLD.status IN ('launching', 'running') THEN
    DELETE FROM claim_slots AS s
     WHERE hashtextextended(length(s.thread_scope)::text || ':' || s.thread_scope || COALESCE(s.thread_id, s.run_id), 0)
           = hashtextextended(length(OLD.thread_scope)::text || ':' || OLD.thread_scope || OLD.thread_id, 0)
       AND s.thread_scope = OLD.thread_scope AND COALESCE(s.thread_id, s.run_id) = OLD.thread_id
       AND s.run_id = OLD.id;
  ELSIF OLD.status = 'queued' THEN
    DELETE FROM run_ready WHERE owner = OLD.owner AND queued_at = OLD.queued_at AND run_id = OLD.id;
  ELSE
    DELETE FROM run_holds WHERE run_id = OLD.id;
  END IF;
  RETURN NULL;
END
$fn$;
`;
