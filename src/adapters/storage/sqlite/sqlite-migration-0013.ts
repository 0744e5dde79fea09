/**
 * SQLite migration 13 (issue 34): `tasks.schedule_type` admits `rrule` (docs/schedules.md#rrule). SQLite
 * cannot change a CHECK in place, and rebuilding `tasks` would cascade-delete the runs that reference it
 * (foreign keys stay on inside the migration's transaction), so the column is replaced: a new column with
 * the new list takes the values, the old one is dropped, and the new one takes its name.
 */
export const SQLITE_MIGRATION_0013 = `
ALTER TABLE tasks ADD COLUMN schedule_type_next TEXT NOT NULL DEFAULT 'cron'
  CHECK (schedule_type_next IN ('cron', 'once', 'interval', 'rrule'));
UPDATE tasks SET schedule_type_next = schedule_type;
ALTER TABLE tasks DROP COLUMN schedule_type;
ALTER TABLE tasks RENAME COLUMN schedule_type_next TO schedule_type;
`;
