/**
 * SQLite migration 8 (issue 15): `fleet_settings`, the values every replica of one database shares
 * (docs/operations.md#sizing-the-budget). One row per setting; today only `max_concurrent_runs`, the
 * global budget, written by the first replica or by `punctual migrate --max-concurrent-runs`.
 */
export const SQLITE_MIGRATION_0008 = `
CREATE TABLE fleet_settings (
  name   TEXT PRIMARY KEY CHECK (name IN ('max_concurrent_runs')),
  value  INTEGER NOT NULL CHECK (value >= 1),
  set_at INTEGER NOT NULL
) STRICT;
`;
