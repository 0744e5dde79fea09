/**
 * Migration 9 (issue 21): the fair share's queue reads (docs/storage.md#fair-share-across-owners). A claim
 * reads each owner's queue head, not one prefix of the whole queue: `runs_owner_queue_idx` walks one
 * owner's queued runs in claim order and, with a skip scan, lists the owners with queued work;
 * `runs_thread_queue_idx` tells whether a run has an earlier queued run in its thread (a thread may be
 * shared by tasks of several owners), one index probe per candidate. `runs_thread_hold_idx` and
 * `runs_task_hold_idx` find the cancelled runs whose target was not told that still hold their thread
 * (and exclusive task) until their deadline (docs/semantics.md#cancellation): a handful of rows.
 */
export const SQLITE_MIGRATION_0009 = `
CREATE INDEX runs_owner_queue_idx ON runs (owner, queued_at, id)
  WHERE status = 'queued';
CREATE INDEX runs_thread_queue_idx ON runs (thread_scope, thread_id, queued_at, id)
  WHERE status = 'queued';
CREATE INDEX runs_thread_hold_idx ON runs (thread_scope, thread_id, deadline_at)
  WHERE status = 'cancelled' AND deadline_at IS NOT NULL;
CREATE INDEX runs_task_hold_idx ON runs (task_id, deadline_at)
  WHERE status = 'cancelled' AND deadline_at IS NOT NULL AND "exclusive" = 1;
`;
