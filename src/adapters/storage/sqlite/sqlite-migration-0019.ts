/**
 * SQLite migration 19 (issue 34): a run admitted from an occurrence moved off an excluded date says so
 * (docs/schedules.md#moved-occurrences). As PostgreSQL's migration 29: a nullable column placed last,
 * 1 for such a run only; every other run, those already stored included, reads NULL (no rewrite).
 */
export const SQLITE_MIGRATION_0019 = `
ALTER TABLE runs ADD COLUMN moved INTEGER;
`;
