/**
 * SQLite migration 18 (issues 35 and 34): a calendar a schedule names is stored as a reference, and a
 * calendar remembers the region whose public holidays it follows (docs/schedules.md#calendars,
 * #holidays). As PostgreSQL's migration 27: `calendar_versions` keeps each version's items once (the
 * current calendars first, then each version a task holds, a live task's winning over a deleted task's),
 * then the items are dropped from the schedules of the tasks naming a calendar.
 */
export const SQLITE_MIGRATION_0018 = `
CREATE TABLE calendar_versions (
  owner   TEXT NOT NULL,
  name    TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  items   TEXT NOT NULL,
  PRIMARY KEY (owner, name, version)
);

ALTER TABLE calendars ADD COLUMN holiday_region TEXT;
ALTER TABLE calendars ADD COLUMN holiday_from_year INTEGER;
ALTER TABLE calendars ADD COLUMN holiday_to_year INTEGER;

INSERT OR IGNORE INTO calendar_versions (owner, name, version, items)
SELECT owner, name, version, items FROM calendars;

INSERT OR IGNORE INTO calendar_versions (owner, name, version, items)
SELECT t.owner, json_extract(e.value, '$.name'), json_extract(e.value, '$.version'),
       COALESCE(json_extract(e.value, '$.itemsJson'), json_extract(e.value, '$.items'), '[]')
  FROM tasks AS t, json_each(t.schedule, '$.exclude') AS e
 WHERE json_extract(e.value, '$.kind') = 'calendar'
 ORDER BY t.deleted_at IS NOT NULL;

UPDATE tasks SET schedule = json_set(schedule, '$.exclude', json((
  SELECT json_group_array(CASE WHEN json_extract(e.value, '$.kind') = 'calendar'
                               THEN json_remove(e.value, '$.itemsJson', '$.items')
                               ELSE json(e.value) END)
    FROM json_each(tasks.schedule, '$.exclude') AS e)))
 WHERE EXISTS (SELECT 1 FROM json_each(tasks.schedule, '$.exclude') AS e
                WHERE json_extract(e.value, '$.kind') = 'calendar');
`;
