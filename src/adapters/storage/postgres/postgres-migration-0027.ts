/**
 * Migration 27 (issues 35 and 34): a calendar a schedule names is stored as a reference, and a calendar
 * remembers the region whose public holidays it follows (docs/schedules.md#calendars, #holidays).
 *
 * `calendar_versions` keeps each version's items once, as the packed JSON text the codec writes (or, for
 * the rows copied here, the JSON list stored before: the codec reads both), shared by every task that
 * names that version; a task's schedule keeps `{kind: "calendar", name, version}` only. The versions the
 * tasks held are copied first (the current calendars, then each version a task holds, the one a live task
 * holds winning over a deleted task's), so every task keeps what admission decides against; then the
 * items are dropped from the tasks' schedules, in one rewrite of the tasks naming a calendar.
 */
export const POSTGRES_MIGRATION_0027 = `
CREATE TABLE calendar_versions (
  owner   text NOT NULL,
  name    text NOT NULL,
  version integer NOT NULL CONSTRAINT calendar_versions_version_check CHECK (version >= 1),
  items   text NOT NULL,
  CONSTRAINT calendar_versions_pkey PRIMARY KEY (owner, name, version)
);

ALTER TABLE calendars
  ADD COLUMN holiday_region text,
  ADD COLUMN holiday_from_year integer,
  ADD COLUMN holiday_to_year integer;

INSERT INTO calendar_versions (owner, name, version, items)
SELECT owner, name, version, items::text FROM calendars;

INSERT INTO calendar_versions (owner, name, version, items)
SELECT DISTINCT ON (t.owner, e.v->>'name', (e.v->>'version')::int)
       t.owner, e.v->>'name', (e.v->>'version')::int,
       COALESCE(e.v->>'itemsJson', (e.v->'items')::text, '[]')
  FROM tasks AS t
 CROSS JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(t.schedule->'exclude') = 'array' THEN t.schedule->'exclude'
              ELSE '[]'::jsonb END) AS e(v)
 WHERE e.v->>'kind' = 'calendar'
 ORDER BY t.owner, e.v->>'name', (e.v->>'version')::int, t.deleted_at NULLS FIRST
ON CONFLICT (owner, name, version) DO NOTHING;

UPDATE tasks SET schedule = jsonb_set(schedule, '{exclude}', (
  SELECT jsonb_agg(CASE WHEN e.v->>'kind' = 'calendar' THEN e.v - 'itemsJson' - 'items' ELSE e.v END
                   ORDER BY e.i)
    FROM jsonb_array_elements(schedule->'exclude') WITH ORDINALITY AS e(v, i)))
 WHERE jsonb_typeof(schedule->'exclude') = 'array'
   AND schedule->'exclude' @> '[{"kind": "calendar"}]';
`;
