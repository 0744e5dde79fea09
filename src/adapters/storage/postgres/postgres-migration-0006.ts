/**
 * Migration 6 (issue 14): the claim path's narrow hot table (docs/storage.md#the-claim-path-on-postgresql).
 * `claim_slots` holds one row per slot of the global budget: a free slot has no run, a taken one names
 * the launching or running run that holds it, with that run's thread (and task, when exclusive), owner and
 * replica. Claimers take free slots with `FOR UPDATE SKIP LOCKED`, so replicas claim in parallel and
 * together never hold more slots than the budget; the unique keys make "one active run per thread" and
 * "one active exclusive run per task" a property of this small table as well as of `runs`'s partial
 * indexes. A trigger frees the slot whenever its run leaves launching/running (or is deleted), whatever
 * statement moved it. The runs active when the migration runs are given slots 1..n, so no run is lost
 * from the count. Functions are created with the migration's `search_path`, so they find the table
 * whatever the calling session's path is.
 */
export const POSTGRES_MIGRATION_0006 = `
CREATE TABLE claim_slots (
  slot         integer PRIMARY KEY CONSTRAINT claim_slots_slot_check CHECK (slot >= 1),
  run_id       text CONSTRAINT claim_slots_run_uq UNIQUE,
  thread_scope text,
  thread_id    text,
  task_id      text,
  owner        text,
  claimed_by   text,
  CONSTRAINT claim_slots_thread_uq UNIQUE (thread_scope, thread_id),
  CONSTRAINT claim_slots_task_uq UNIQUE (task_id),
  CONSTRAINT claim_slots_bound_check CHECK (
    (run_id IS NULL AND thread_scope IS NULL AND thread_id IS NULL AND task_id IS NULL
       AND owner IS NULL AND claimed_by IS NULL)
    OR (run_id IS NOT NULL AND thread_scope IS NOT NULL AND thread_id IS NOT NULL
       AND owner IS NOT NULL))
);

CREATE INDEX claim_slots_replica_idx ON claim_slots (claimed_by) WHERE claimed_by IS NOT NULL;

INSERT INTO claim_slots (slot, run_id, thread_scope, thread_id, task_id, owner, claimed_by)
SELECT row_number() OVER (ORDER BY queued_at, id), id, thread_scope, thread_id,
       CASE WHEN exclusive THEN task_id END, owner, claimed_by
  FROM runs WHERE status IN ('launching', 'running');

CREATE FUNCTION claim_slot_release() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  UPDATE claim_slots SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
    owner = NULL, claimed_by = NULL
   WHERE run_id = OLD.id;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER runs_slot_release AFTER UPDATE OF status ON runs FOR EACH ROW
  WHEN (OLD.status IN ('launching', 'running') AND NEW.status NOT IN ('launching', 'running'))
  EXECUTE FUNCTION claim_slot_release();

CREATE TRIGGER runs_slot_release_on_delete AFTER DELETE ON runs FOR EACH ROW
  WHEN (OLD.status IN ('launching', 'running'))
  EXECUTE FUNCTION claim_slot_release();
`;
