/**
 * Migration 18 (issue 30): half of each new page of `tasks` and `runs` is left free (`fillfactor = 50`),
 * so the next versions of a fire's rows stay on their page (docs/storage.md#write-ahead-log-per-fire).
 * A fire updates its task twice (admission, the launch bookkeeping) and its run twice (claim, verdict).
 * When the new version fits on the old one's page PostgreSQL logs only the bytes that changed, needs no
 * lock record to move the row, and an update that changes no indexed column (the task's bookkeeping) is
 * heap-only. Measured on a 10,000-fire emulation of today's statements: 6,550 down to 5,501 B of WAL per
 * fire (tasks 1,372 -> 654, runs 4,294 -> 3,963), and both tables ended smaller after the burst (dead
 * versions pruned in place instead of left behind on full pages). Only pages written from now on keep
 * the room; nothing is rewritten (`VACUUM FULL` or pg_repack would apply it to existing pages).
 */
export const POSTGRES_MIGRATION_0018 = `
ALTER TABLE tasks SET (fillfactor = 50);
ALTER TABLE runs SET (fillfactor = 50);
`;
