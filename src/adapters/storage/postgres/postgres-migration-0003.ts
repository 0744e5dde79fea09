/**
 * Migration 3: an index for purging old `Idempotency-Key` records, which are kept for a retention (24
 * hours by default) rather than forever; the purge walks it oldest first.
 */
export const POSTGRES_MIGRATION_0003 = `
CREATE INDEX idempotency_records_created_idx ON idempotency_records (created_at);
`;
