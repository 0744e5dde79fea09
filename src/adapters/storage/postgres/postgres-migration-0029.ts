/**
 * Migration 29 (issue 34): a run admitted from an occurrence moved off an excluded date says so
 * (docs/schedules.md#moved-occurrences). A nullable column placed last, written `true` for such a run
 * only: every other run (those already stored included) keeps it NULL, which costs no byte of its row
 * (a run row already carries a null bitmap) and no rewrite of the table (adding a column with no
 * default changes the catalog only).
 */
export const POSTGRES_MIGRATION_0029 = `
ALTER TABLE runs ADD COLUMN moved boolean;
`;
