/**
 * SQLite migration 24 (issue 30, item 5): the closed value lists of `runs` and `task_state` checked by
 * comparisons instead of `IN` lists (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal).
 * SQLite evaluates a `CHECK (x IN (...))` of more than two constants by building a temporary b-tree of
 * the list, and in a CHECK constraint it builds it again for every row it checks: each run insert built
 * four (trigger, status, reason, target kind: 37 entries), each verdict one (status) and each
 * `task_state` write of a status one more. The same sets written `x = 'a' OR x = 'b' ...` cost a few
 * comparisons; a value outside the set is refused as before, and NULL passes where it passed (both forms
 * are NULL for a NULL value). The two-value flags (`exclusive`, `late`) keep `IN`: SQLite compares a list
 * of two in place. SQLite cannot change a CHECK constraint in place, so both tables are rebuilt, as in
 * migration 11: every column in its order, every row, then the indexes and `runs`' place triggers
 * (migration 17's text) made again. The implicit delete of a dropped table fires no trigger, so the run
 * places (`run_ready`, `run_active`, `run_holds`) are left as they stand. `tasks` keeps its lists: no
 * fire writes its checked columns.
 */
import { SQLITE_RUN_PLACE_TRIGGERS } from "./sqlite-migration-0017.js";

/** `column = 'a' OR column = 'b' ...` for a closed set of text values. */
function oneOf(column: string, values: readonly string[]): string {
  return values.map((value) => `${column} = '${value}'`).join(" OR ");
}

const RUNS = `
CREATE TABLE runs_next (
  id                  TEXT PRIMARY KEY,
  task_id             TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  owner               TEXT NOT NULL,
  "trigger"           TEXT NOT NULL
                        CHECK (${oneOf(`"trigger"`, ["scheduled", "manual", "backfill"])}),
  scheduled_for       INTEGER NOT NULL,
  fire_at             INTEGER NOT NULL,
  status              TEXT NOT NULL
                        CHECK (${oneOf("status", [
                          "queued",
                          "launching",
                          "running",
                          "succeeded",
                          "failed",
                          "timed_out",
                          "cancelled",
                          "skipped",
                          "missed",
                        ])}),
  missed_count        INTEGER,
  missed_until        INTEGER,
  attempt             INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  failures            INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
  not_before          INTEGER NOT NULL,
  thread_scope        TEXT NOT NULL,
  thread_id           TEXT NOT NULL,
  "exclusive"         INTEGER NOT NULL CHECK ("exclusive" IN (0, 1)),
  claim_token         TEXT,
  claim_expires_at    INTEGER,
  claimed_by          TEXT,
  target_run_id       TEXT,
  idempotency_key     TEXT NOT NULL,
  queued_at           INTEGER NOT NULL,
  launched_at         INTEGER,
  deadline_at         INTEGER,
  finished_at         INTEGER,
  lateness_ms         INTEGER,
  late                INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
  cancel_requested_at INTEGER,
  error               TEXT,
  result              TEXT CHECK (json_valid(result)),
  target_kind         TEXT
                        CHECK (target_kind IS NULL OR ${oneOf("target_kind", ["agent", "webhook", "handler"])}),
  reason              TEXT
                        CHECK (${oneOf("reason", [
                          "overlap",
                          "coalesced",
                          "buffer_full",
                          "down",
                          "paused",
                          "window",
                          "queue_timeout",
                          "launch_failed",
                          "target_failed",
                          "replica_lost",
                          "run_timeout",
                          "cancel_requested",
                          "superseded",
                          "task_paused",
                          "task_cancelled",
                          "task_deleted",
                          "target_cancelled",
                          "excluded",
                          "non_retryable",
                          "invalid_input",
                          "quota",
                          "no_handler",
                        ])}),
  moved               INTEGER
) STRICT;

INSERT INTO runs_next (id, task_id, owner, "trigger", scheduled_for, fire_at, status, missed_count, missed_until, attempt, failures, not_before, thread_scope, thread_id, "exclusive", claim_token, claim_expires_at, claimed_by, target_run_id, idempotency_key, queued_at, launched_at, deadline_at, finished_at, lateness_ms, late, cancel_requested_at, error, result, target_kind, reason, moved)
  SELECT id, task_id, owner, "trigger", scheduled_for, fire_at, status, missed_count, missed_until, attempt, failures, not_before, thread_scope, thread_id, "exclusive", claim_token, claim_expires_at, claimed_by, target_run_id, idempotency_key, queued_at, launched_at, deadline_at, finished_at, lateness_ms, late, cancel_requested_at, error, result, target_kind, reason, moved
  FROM runs;

DROP TABLE runs;

ALTER TABLE runs_next RENAME TO runs;

CREATE UNIQUE INDEX runs_manual_key_uq ON runs (task_id, idempotency_key)
  WHERE "trigger" = 'manual';
CREATE INDEX runs_owner_rare_idx ON runs (owner, scheduled_for DESC, id DESC)
  WHERE late = 1 OR "trigger" <> 'scheduled';
CREATE INDEX runs_owner_requested_idx ON runs (owner, queued_at) WHERE "trigger" <> 'scheduled';
CREATE INDEX runs_queued_at_idx ON runs (queued_at);
CREATE UNIQUE INDEX runs_occurrence_uq
  ON runs (task_id, scheduled_for, (CASE "trigger" WHEN 'manual' THEN id ELSE "trigger" END));
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for, id);
`;

const TASK_STATE = `
CREATE TABLE task_state_next (
  task_id         TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
  status          TEXT NOT NULL
                    CHECK (${oneOf("status", ["enabled", "paused", "completed", "failed", "cancelled"])}),
  next_run_at     INTEGER,
  decided_through INTEGER NOT NULL,
  admitted_count  INTEGER NOT NULL DEFAULT 0 CHECK (admitted_count >= 0),
  last_run_at     INTEGER,
  last_run_id     TEXT,
  last_error      TEXT,
  run_count       INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0),
  defect_at       INTEGER
) STRICT, WITHOUT ROWID;

INSERT INTO task_state_next (task_id, status, next_run_at, decided_through, admitted_count, last_run_at, last_run_id, last_error, run_count, defect_at)
  SELECT task_id, status, next_run_at, decided_through, admitted_count, last_run_at, last_run_id, last_error, run_count, defect_at
  FROM task_state;

DROP TABLE task_state;

ALTER TABLE task_state_next RENAME TO task_state;

CREATE INDEX task_state_due_idx ON task_state (next_run_at, task_id)
  WHERE status = 'enabled' AND defect_at IS NULL AND next_run_at IS NOT NULL;
`;

export const SQLITE_MIGRATION_0024 = RUNS + SQLITE_RUN_PLACE_TRIGGERS + TASK_STATE;
