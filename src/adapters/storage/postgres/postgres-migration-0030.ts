/**
 * Migration 30 (issue 30): a run may be inserted already claimed (docs/storage.md#fused-admit-and-claim).
 * The insert trigger refused every run inserted launching or running; it now refuses only one that does
 * not hold a budget slot bound in the same statement or before it in the transaction (found by the slot's
 * thread key and the run's id, as the update trigger checks a claim). A queued run's `run_ready` row and
 * a cancelled run's hold are written as before. Only the function changes: every run is kept as it is.
 */
export const POSTGRES_MIGRATION_0030 = `
CREATE OR REPLACE FUNCTION runs_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted AS n WHERE n.status IN ('launching', 'running')
                AND NOT EXISTS (SELECT 1 FROM claim_slots AS s WHERE s.thread_scope = n.thread_scope
                                   AND s.thread_id = n.thread_id AND s.run_id = n.id)) THEN
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
`;
