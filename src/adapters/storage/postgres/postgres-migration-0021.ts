/**
 * Migration 21 (issue 30): the sweeps find launching and running runs through the budget's slots, so
 * `runs` loses its two indexes on the claim's and the launch's state (docs/storage.md#write-ahead-log-per-fire).
 * `runs_claim_expiry_idx` (claim expiry of launching runs) and `runs_deadline_idx` (deadline of launching
 * and running runs) took an entry from the claim's version of every run, and the deadline index another
 * from a launch written apart from its verdict. A run is launching or running only while it holds a
 * budget slot (bound in the claim's own statement, freed by the slot trigger when it ends or is deleted),
 * so the expired-claim, deadline, lost-handler and watcher sweeps, the queue statistics' active count and
 * the next wake-up read at most one run per slot, each by primary key. Dropping an index rewrites nothing.
 */
export const POSTGRES_MIGRATION_0021 = `
DROP INDEX runs_claim_expiry_idx;
DROP INDEX runs_deadline_idx;
`;
