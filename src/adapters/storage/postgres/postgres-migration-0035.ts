/**
 * Migration 35 (issue 30): the owners' listing appended to, not split
 * (docs/storage.md#the-statements-of-one-fire-and-their-wal), as SQLite's migration 22.
 * `runs_owner_listing_idx` was `(owner, target_kind, scheduled_for DESC, id DESC)`: a new run (a later
 * instant, a later time-ordered id) sorted before its owner's older runs of the same kind, so every insert
 * went in left of the last one, and PostgreSQL split each full page in halves (a split record of about
 * 3,700 bytes every 50-odd runs: 74 bytes per fire). Ascending, a new run goes at the end of its owner's
 * and kind's range, where a full page at the index's right end is split leaving the left page full. The
 * listings walk it backwards (`ORDER BY scheduled_for DESC, id DESC`, an index scan backward per kind,
 * merged): the same rows in the same order, no sort.
 *
 * Rebuilding the index reads `runs` whole and holds writes to it (a `SHARE` lock, for the runner's
 * transaction): 2.0 to 2.7 s per 1,000,000 runs on the benchmark machine, the table in memory
 * (docs/storage.md#postgresql, "Migrations"). No run is touched.
 */
export const POSTGRES_MIGRATION_0035 = `
DROP INDEX runs_owner_listing_idx;
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for, id);
`;
