/**
 * Migration 14 (issue 14): the index that counts an owner's recent requested runs (the backfill quota,
 * docs/operations.md#quotas) covers only runs that were not scheduled. Migration 13 indexed every run on
 * `(owner, queued_at)`, so every version of every run written on the hot path (insert, claim, verdict)
 * added an entry to it for a count that only reads backfilled runs (docs/storage.md#the-claim-path-on-postgresql).
 * `trigger` never changes after insert, so the partial index costs nothing for scheduled runs.
 */
export const POSTGRES_MIGRATION_0014 = `
DROP INDEX runs_owner_queued_idx;
CREATE INDEX runs_owner_requested_idx ON runs (owner, queued_at) WHERE "trigger" <> 'scheduled';
`;
