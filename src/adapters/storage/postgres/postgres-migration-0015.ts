/**
 * Migration 15 (issue 14): cheaper budget slots (docs/storage.md#the-claim-path-on-postgresql).
 * - A run that leaves launching/running frees its slot through one statement-level trigger per
 *   `UPDATE` of `runs`, reading the statement's old and new rows (transition tables), instead of a
 *   row-level trigger that ran one `UPDATE` of `claim_slots` per run: a verdict batch of 250 runs made
 *   250 nested statements. It still frees the slot whatever statement moved the run.
 * - The unique keys of `claim_slots` index taken slots only. Each bind and release of a slot rewrites its
 *   row (the keys' columns change), and a free slot's NULLs were entered in every key; now a release
 *   enters the slot in the primary key alone. Uniqueness is unchanged (NULLs never conflicted), and the
 *   index names stay, so a clash is still reported by the same name.
 */
export const POSTGRES_MIGRATION_0015 = `
DROP TRIGGER runs_slot_release ON runs;

CREATE FUNCTION claim_slots_release_moved() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $fn$
BEGIN
  UPDATE claim_slots AS s SET run_id = NULL, thread_scope = NULL, thread_id = NULL, task_id = NULL,
    owner = NULL, claimed_by = NULL
    FROM moved_old AS o JOIN moved_new AS n ON n.id = o.id
   WHERE s.run_id = o.id
     AND o.status IN ('launching', 'running') AND n.status NOT IN ('launching', 'running');
  RETURN NULL;
END
$fn$;

CREATE TRIGGER runs_slot_release AFTER UPDATE ON runs
  REFERENCING OLD TABLE AS moved_old NEW TABLE AS moved_new
  FOR EACH STATEMENT EXECUTE FUNCTION claim_slots_release_moved();

ALTER TABLE claim_slots DROP CONSTRAINT claim_slots_run_uq,
  DROP CONSTRAINT claim_slots_thread_uq, DROP CONSTRAINT claim_slots_task_uq;
CREATE UNIQUE INDEX claim_slots_run_uq ON claim_slots (run_id) WHERE run_id IS NOT NULL;
CREATE UNIQUE INDEX claim_slots_thread_uq ON claim_slots (thread_scope, thread_id)
  WHERE thread_id IS NOT NULL;
CREATE UNIQUE INDEX claim_slots_task_uq ON claim_slots (task_id) WHERE task_id IS NOT NULL;
`;
