/**
 * Migration 10 (issue 15): `fleet_settings`, the values every replica of one database shares
 * (docs/operations.md#sizing-the-budget). One row per setting; today only `max_concurrent_runs`, the
 * global budget, written by the first replica or by `punctual migrate --max-concurrent-runs`.
 */
export const POSTGRES_MIGRATION_0010 = `
CREATE TABLE fleet_settings (
  name   text PRIMARY KEY CONSTRAINT fleet_settings_name_check CHECK (name IN ('max_concurrent_runs')),
  value  bigint NOT NULL CONSTRAINT fleet_settings_value_check CHECK (value >= 1),
  set_at timestamptz NOT NULL
);
`;
