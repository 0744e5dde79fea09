/**
 * Migration 24 (issue 30): a narrow queue, and a ledger whose indexes never mention a column the hot
 * path changes (docs/storage.md#the-run-model-on-postgresql).
 *
 * - `run_ready` holds the queued runs only, with what the claim reads to choose (owner, task, thread,
 *   exclusivity, queue order, not-before), keyed for the claim's order per owner, by task (admission's
 *   overlap check, owner commands) and by shared thread (per-thread FIFO). Every queued run is copied in.
 * - `run_holds` holds the cancelled runs whose target was not told (a deadline): each holds its thread, and
 *   its task when exclusive, until that deadline (docs/semantics.md#cancellation).
 * - `claim_slots.run_task_id` names the task of every bound slot's run (`task_id` stays set only for
 *   exclusive runs, for its unique key): the active runs of a task are the ones in `run_ready` and the
 *   slots, so no index of `runs` needs to know which runs are active.
 * - Both tables are kept by triggers on `runs`, in the statement that moves a run: the claim's write
 *   deletes its runs' `run_ready` rows, admission's and the owner commands' inserts add them, a cancel,
 *   skip, expiry or redrive moves them. A run written launching or running without a bound slot is
 *   refused (`runs_moved`), so `claim_slots`' unique keys keep one active run per thread and per
 *   exclusive task on every path.
 * - `runs` loses every index whose key or predicate names status, a claim column, launched_at,
 *   finished_at or deadline_at; the owner listing index is rebuilt without status; retention walks
 *   `runs_queued_at_idx` (a run is queued before it finishes). A fire's status changes are then heap-only
 *   updates (fillfactor 50, migration 18).
 */
/** The queue and hold tables, filled from the runs as they stand. */
export const RUN_TABLES_0024 = `
CREATE TABLE run_ready (
  run_id       text PRIMARY KEY,
  owner        text NOT NULL,
  task_id      text NOT NULL,
  thread_scope text NOT NULL,
  thread_id    text NOT NULL,
  exclusive    boolean NOT NULL,
  queued_at    timestamptz NOT NULL,
  not_before   timestamptz NOT NULL
);
INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
  SELECT id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before
    FROM runs WHERE status = 'queued';
CREATE INDEX run_ready_owner_queue_idx ON run_ready (owner, queued_at, run_id);
CREATE INDEX run_ready_task_idx ON run_ready (task_id);
CREATE INDEX run_ready_thread_queue_idx ON run_ready (thread_scope, thread_id, queued_at, run_id)
  WHERE thread_id <> run_id;

CREATE TABLE run_holds (
  run_id       text PRIMARY KEY,
  thread_scope text NOT NULL,
  thread_id    text NOT NULL,
  task_id      text,
  deadline_at  timestamptz NOT NULL
);
INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
  SELECT id, thread_scope, thread_id, CASE WHEN exclusive THEN task_id END, deadline_at
    FROM runs WHERE status = 'cancelled' AND deadline_at IS NOT NULL;
CREATE INDEX run_holds_thread_idx ON run_holds (thread_scope, thread_id, deadline_at);
CREATE INDEX run_holds_task_idx ON run_holds (task_id, deadline_at) WHERE task_id IS NOT NULL;

`;

/** Each bound slot names its run's task. */
export const SLOT_TASK_0024 = `
ALTER TABLE claim_slots ADD COLUMN run_task_id text;
UPDATE claim_slots AS s SET run_task_id = r.task_id FROM runs AS r WHERE r.id = s.run_id;
`;

/** The triggers that keep `run_ready`, `run_holds` and the slots in step with `runs`. */
export const RUN_TRIGGERS_0024 = `
CREATE FUNCTION runs_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted AS n WHERE n.status IN ('launching', 'running')) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
    SELECT n.id, n.owner, n.task_id, n.thread_scope, n.thread_id, n.exclusive, n.queued_at, n.not_before
      FROM inserted AS n WHERE n.status = 'queued';
  INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
    SELECT n.id, n.thread_scope, n.thread_id, CASE WHEN n.exclusive THEN n.task_id END, n.deadline_at
      FROM inserted AS n WHERE n.status = 'cancelled' AND n.deadline_at IS NOT NULL;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER runs_inserted AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION runs_inserted();

CREATE FUNCTION runs_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  -- Slots of runs that stopped being launching or running.
  UPDATE claim_slots AS s SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
    owner = NULL, claimed_by = NULL, run_task_id = NULL
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE s.run_id = o.id
     AND o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running');
  -- A run that became launching or running holds a slot bound in the same statement (the claim's).
  IF EXISTS (SELECT 1 FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
              WHERE n.status IN ('launching', 'running') AND o.status NOT IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s WHERE s.run_id = n.id)) THEN
    RAISE EXCEPTION 'a run is launching or running only once claimed into a budget slot'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'runs_active_holds_slot';
  END IF;
  -- The queue: out when a run leaves queued, in when it comes back (a retry, a redrive).
  DELETE FROM run_ready AS q USING moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE q.run_id = o.id AND o.status = 'queued' AND n.status <> 'queued';
  INSERT INTO run_ready (run_id, owner, task_id, thread_scope, thread_id, exclusive, queued_at, not_before)
    SELECT n.id, n.owner, n.task_id, n.thread_scope, n.thread_id, n.exclusive, n.queued_at, n.not_before
      FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
     WHERE n.status = 'queued' AND o.status <> 'queued';
  UPDATE run_ready AS q SET thread_scope = n.thread_scope, thread_id = n.thread_id,
    exclusive = n.exclusive, queued_at = n.queued_at, not_before = n.not_before
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE q.run_id = n.id AND o.status = 'queued' AND n.status = 'queued'
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
CREATE TRIGGER runs_moved AFTER UPDATE ON runs
  REFERENCING OLD TABLE AS moved_old NEW TABLE AS moved_new
  FOR EACH STATEMENT EXECUTE FUNCTION runs_moved();

CREATE FUNCTION runs_deleted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF OLD.status IN ('launching', 'running') THEN
    UPDATE claim_slots SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
      owner = NULL, claimed_by = NULL, run_task_id = NULL
     WHERE run_id = OLD.id;
  ELSIF OLD.status = 'queued' THEN
    DELETE FROM run_ready WHERE run_id = OLD.id;
  ELSE
    DELETE FROM run_holds WHERE run_id = OLD.id;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER runs_deleted AFTER DELETE ON runs FOR EACH ROW
  WHEN (OLD.status IN ('queued', 'launching', 'running')
        OR (OLD.status = 'cancelled' AND OLD.deadline_at IS NOT NULL))
  EXECUTE FUNCTION runs_deleted();

`;

export const POSTGRES_MIGRATION_0024 =
  RUN_TABLES_0024 +
  SLOT_TASK_0024 +
  `
ALTER TABLE claim_slots DROP CONSTRAINT claim_slots_bound_check;
ALTER TABLE claim_slots ADD CONSTRAINT claim_slots_bound_check CHECK (
  (run_id IS NULL AND thread_scope IS NULL AND thread_id IS NULL AND task_id IS NULL
    AND owner IS NULL AND claimed_by IS NULL AND run_task_id IS NULL)
  OR (run_id IS NOT NULL AND thread_scope IS NOT NULL AND thread_id IS NOT NULL
    AND owner IS NOT NULL AND run_task_id IS NOT NULL));

DROP TRIGGER runs_slot_release ON runs;
DROP FUNCTION claim_slots_release_moved();
DROP TRIGGER runs_slot_release_on_delete ON runs;
DROP FUNCTION claim_slot_release();

` +
  RUN_TRIGGERS_0024 +
  `
DROP INDEX runs_active_task_idx;
DROP INDEX runs_owner_queue_idx;
DROP INDEX runs_queue_idx;
DROP INDEX runs_thread_queue_idx;
DROP INDEX runs_task_slot_uq;
DROP INDEX runs_thread_slot_uq;
DROP INDEX runs_task_hold_idx;
DROP INDEX runs_thread_hold_idx;
DROP INDEX runs_retention_idx;
DROP INDEX runs_owner_listing_idx;
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_queued_at_idx ON runs (queued_at);
`;
