/**
 * Migration 16 (issue 14): less write-ahead log per fire (docs/storage.md#write-ahead-log-per-fire).
 * - `tasks` keeps 30% of each page free (`fillfactor = 70`). A fire updates its task twice (admission,
 *   then the launch bookkeeping); with room on the page the new version stays beside the old one, so
 *   PostgreSQL logs only the bytes that changed instead of the whole row, and an update that changes no
 *   indexed column (a cron task's bookkeeping) is a heap-only update that enters no index at all.
 *   Measured on a 10,000-task burst: 7.9 kB of WAL per fire down to 7.1 kB; 1,000 crons due at one
 *   second: 9.0 kB down to 7.1 kB. Only pages written from now on keep the room; nothing is rewritten.
 * - `claim_slots_replica_idx` is dropped: no statement reads slots by replica (a silent replica's
 *   claims are found on `runs`), and every bind of a slot entered it.
 */
export const POSTGRES_MIGRATION_0016 = `
ALTER TABLE tasks SET (fillfactor = 70);
DROP INDEX claim_slots_replica_idx;
`;
