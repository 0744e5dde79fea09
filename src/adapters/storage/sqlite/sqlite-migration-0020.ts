/**
 * SQLite migration 20 (issue 30): a task's definition row carries a stamp that every write of the row
 * changes, so that a store may keep the definitions it decoded and reuse one only for the row it was read
 * from (docs/storage.md#the-claim-reads-narrow-rows; PostgreSQL stamps by the row's `xmin`). A secret's
 * rotation, a reseal and a deletion write the row without a new `version`; the stamp moves on each. The
 * trigger moves it whatever statement wrote the row (only owner commands write `tasks`, never a fire), and
 * not again for its own write. Every task starts at 0; no run is touched.
 */
export const SQLITE_MIGRATION_0020 = `
ALTER TABLE tasks ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER tasks_stamped AFTER UPDATE ON tasks
  WHEN NEW.stamp = OLD.stamp
BEGIN
  UPDATE tasks SET stamp = OLD.stamp + 1 WHERE id = OLD.id;
END;
`;
