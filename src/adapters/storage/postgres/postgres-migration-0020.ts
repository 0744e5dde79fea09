/** Migration 20 (issue 34): `tasks.schedule_type` admits `rrule` (docs/schedules.md#rrule). */
export const POSTGRES_MIGRATION_0020 = `
ALTER TABLE tasks DROP CONSTRAINT tasks_schedule_type_check,
  ADD CONSTRAINT tasks_schedule_type_check
    CHECK (schedule_type IN ('cron', 'once', 'interval', 'rrule'));
`;
