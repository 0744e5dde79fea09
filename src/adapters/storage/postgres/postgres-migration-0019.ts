/**
 * Migration 19 (issue 30): `runs_thread_queue_idx` holds only queued runs on a shared thread
 * (docs/storage.md#write-ahead-log-per-fire). A run on a thread of its own (a fresh thread per run: its
 * thread id is its own id) entered it at every insert, for a probe that could only find the run itself;
 * the claim's FIFO probe now finds such a run, when a run bound to a thread of that name asks, by
 * primary key. The index is rebuilt in the migration's transaction: writes to `runs` wait while it scans
 * the table (about a second per million runs here).
 */
export const POSTGRES_MIGRATION_0019 = `
DROP INDEX runs_thread_queue_idx;
CREATE INDEX runs_thread_queue_idx ON runs (thread_scope, thread_id, queued_at, id)
  WHERE (status || '') = 'queued' AND thread_id <> id;
`;
