/**
 * SQLite migration 12 (issue 14): as PostgreSQL's migration 14, the index that counts an owner's recent
 * requested runs (the backfill quota) covers only runs that were not scheduled, so the runs written on
 * every fire no longer add an entry to it.
 */
export const SQLITE_MIGRATION_0012 = `
DROP INDEX runs_owner_queued_idx;
CREATE INDEX runs_owner_requested_idx ON runs (owner, queued_at) WHERE "trigger" <> 'scheduled';
`;
