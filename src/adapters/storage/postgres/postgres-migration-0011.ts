/**
 * Migration 11 (issue 21): the fair share's queue reads (docs/storage.md#fair-share-across-owners). A claim
 * reads each owner's queue head, not one prefix of the whole queue: `runs_owner_queue_idx` walks one
 * owner's queued runs in claim order and, with a skip scan, lists the owners with queued work;
 * `runs_thread_queue_idx` tells whether a run has an earlier queued run in its thread (a thread may be
 * shared by tasks of several owners), one index probe per candidate. `claim_slots_owner_idx` counts the
 * slots an owner holds. `runs_thread_hold_idx` and `runs_task_hold_idx` find the cancelled runs whose
 * target was not told that still hold their thread (and exclusive task) until their deadline
 * (docs/semantics.md#cancellation): a handful of rows, probed once per candidate.
 *
 * The queue and hold indexes' predicates are written `(status || '') = 'queued'`, and so are the claim's
 * clauses that use them: PostgreSQL can then prove no other partial index of `runs` (`runs_queue_idx`,
 * `runs_active_task_idx`, whose predicates name `status`) serves those clauses. Without it, after an
 * `ANALYZE` that saw few queued runs, the planner walked `runs_active_task_idx` whole for every probe
 * (66,000 buffers for a claim of 200 runs, growing with the square of the queue).
 */
export const POSTGRES_MIGRATION_0011 = `
CREATE INDEX runs_owner_queue_idx ON runs (owner, queued_at, id)
  WHERE (status || '') = 'queued';
CREATE INDEX runs_thread_queue_idx ON runs (thread_scope, thread_id, queued_at, id)
  WHERE (status || '') = 'queued';
CREATE INDEX claim_slots_owner_idx ON claim_slots (owner) WHERE owner IS NOT NULL;
CREATE INDEX runs_thread_hold_idx ON runs (thread_scope, thread_id, deadline_at)
  WHERE (status || '') = 'cancelled' AND deadline_at IS NOT NULL;
CREATE INDEX runs_task_hold_idx ON runs (task_id, deadline_at)
  WHERE (status || '') = 'cancelled' AND deadline_at IS NOT NULL AND exclusive;
`;
