/**
 * SQLite migration 22 (issue 30): the owner listing index holds its newest entries at the end of each
 * owner's range, so that a run's insert fills a page instead of splitting one in halves
 * (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal). `runs_owner_listing_idx` was declared
 * `(owner, target_kind, scheduled_for DESC, id DESC)`, the order a listing reads: a new run sorted before
 * every older run of its owner and kind, so each insert went to the left of the last one, and SQLite,
 * which packs a page full only when rows are added past its last entry, split every page it filled into
 * two half-empty ones. The same key ascending is walked backwards by the same listings (SQLite reads an
 * index in reverse as cheaply as forwards); a new run then goes at the end of its owner's range. Same
 * name and columns; no run is touched.
 */
export const SQLITE_MIGRATION_0022 = `
DROP INDEX runs_owner_listing_idx;
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for, id);
`;
