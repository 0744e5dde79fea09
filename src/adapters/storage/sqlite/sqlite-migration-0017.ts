/**
 * SQLite migration 17 (issue 30): the run model PostgreSQL has since its migration 24, built for SQLite
 * (docs/storage.md#the-run-model-on-sqlite). What a fire changes of a run's place lives in narrow tables
 * beside the ledger, and no index of `runs` names a column a fire changes (status, the claim columns,
 * `launched_at`, `deadline_at`, `finished_at`): a status change rewrites the run's row and no index of it.
 *
 * - `run_ready`: the queued runs, keyed in the claim's order per owner (`WITHOUT ROWID`, so the key is
 *   the table: one b-tree), with a task index (admission's overlap check, owner commands) and a thread
 *   index for shared threads only (per-thread FIFO; a run on a thread of its own has no entry there).
 * - `run_active`: the launching and running runs, keyed by thread: its key is the one-active-run-per-thread
 *   rule, and `run_active_task_uq` (on the task, and a run's own id unless it is exclusive) the
 *   one-active-run-per-exclusive-task rule while serving every lookup of a task's active runs. The global
 *   budget counts its rows.
 * - `run_holds`: the cancelled runs whose target was not told, until their deadline (each holds its
 *   thread, and its task when exclusive: docs/semantics.md#cancellation).
 * - Triggers on `runs` keep the three in step when a run is updated or deleted, row by row inside the
 *   statement that moves it, whatever path wrote it: a clash on `run_active` fails that statement like
 *   the partial unique indexes it replaces did. A run inserted is placed by the store's insert
 *   (SqliteStatements.insertRun), the one statement that inserts runs.
 * - `runs` keeps the occurrence, manual key, history, rare and requested indexes (none names a column a
 *   fire changes); the owner listing index loses `status`; retention walks `runs_queued_at_idx` (a run is
 *   queued before it finishes). Every run is kept; the new tables are filled from the runs as they stand.
 */
const TABLES = `
CREATE TABLE run_ready (
  owner        TEXT NOT NULL,
  queued_at    INTEGER NOT NULL,
  run_id       TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  thread_scope TEXT NOT NULL,
  thread_id    TEXT NOT NULL,
  "exclusive"  INTEGER NOT NULL,
  not_before   INTEGER NOT NULL,
  PRIMARY KEY (owner, queued_at, run_id)
) STRICT, WITHOUT ROWID;
INSERT INTO run_ready (owner, queued_at, run_id, task_id, thread_scope, thread_id, "exclusive", not_before)
  SELECT owner, queued_at, id, task_id, thread_scope, thread_id, "exclusive", not_before
    FROM runs WHERE status = 'queued';
CREATE INDEX run_ready_task_idx ON run_ready (task_id);
CREATE INDEX run_ready_thread_idx ON run_ready (thread_scope, thread_id, queued_at, run_id)
  WHERE thread_id <> run_id;

CREATE TABLE run_active (
  thread_scope TEXT NOT NULL,
  thread_id    TEXT NOT NULL,
  run_id       TEXT NOT NULL,
  owner        TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  "exclusive"  INTEGER NOT NULL,
  PRIMARY KEY (thread_scope, thread_id)
) STRICT, WITHOUT ROWID;
INSERT INTO run_active (thread_scope, thread_id, run_id, owner, task_id, "exclusive")
  SELECT thread_scope, thread_id, id, owner, task_id, "exclusive"
    FROM runs WHERE status IN ('launching', 'running');
CREATE UNIQUE INDEX run_active_task_uq
  ON run_active (task_id, (CASE WHEN "exclusive" = 1 THEN '' ELSE run_id END));

CREATE TABLE run_holds (
  run_id       TEXT PRIMARY KEY,
  thread_scope TEXT NOT NULL,
  thread_id    TEXT NOT NULL,
  task_id      TEXT,
  deadline_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
  SELECT id, thread_scope, thread_id, CASE WHEN "exclusive" = 1 THEN task_id END, deadline_at
    FROM runs WHERE status = 'cancelled' AND deadline_at IS NOT NULL;
CREATE INDEX run_holds_thread_idx ON run_holds (thread_scope, thread_id, deadline_at);
CREATE INDEX run_holds_task_idx ON run_holds (task_id, deadline_at) WHERE task_id IS NOT NULL;
`;

const READY = `INSERT INTO run_ready (owner, queued_at, run_id, task_id, thread_scope, thread_id,
                         "exclusive", not_before)
    SELECT NEW.owner, NEW.queued_at, NEW.id, NEW.task_id, NEW.thread_scope, NEW.thread_id,
           NEW."exclusive", NEW.not_before`;
const ACTIVE = `INSERT INTO run_active (thread_scope, thread_id, run_id, owner, task_id, "exclusive")
    SELECT NEW.thread_scope, NEW.thread_id, NEW.id, NEW.owner, NEW.task_id, NEW."exclusive"`;
const HOLD = `INSERT OR REPLACE INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
    SELECT NEW.id, NEW.thread_scope, NEW.thread_id,
           CASE WHEN NEW."exclusive" = 1 THEN NEW.task_id END, NEW.deadline_at`;
const UNREADY = `DELETE FROM run_ready
   WHERE owner = OLD.owner AND queued_at = OLD.queued_at AND run_id = OLD.id`;
const INACTIVE = `DELETE FROM run_active
   WHERE thread_scope = OLD.thread_scope AND thread_id = OLD.thread_id AND run_id = OLD.id`;
const UNHOLD = "DELETE FROM run_holds WHERE run_id = OLD.id";
/** The columns a queue, slot or hold row copies: only an update naming one of them can move a run. */
const MOVES = `status, owner, task_id, thread_scope, thread_id, "exclusive", queued_at, not_before,
  deadline_at`;
const IS_ACTIVE = (row: string): string => `${row}.status IN ('launching', 'running')`;
const IS_HOLD = (row: string): string =>
  `(${row}.status = 'cancelled' AND ${row}.deadline_at IS NOT NULL)`;
/** The slot row's identity changed (never on a path today, kept exact all the same). */
const ACTIVE_KEY_MOVED = `(NEW.thread_scope <> OLD.thread_scope OR NEW.thread_id <> OLD.thread_id
    OR NEW.task_id <> OLD.task_id OR NEW."exclusive" <> OLD."exclusive" OR NEW.owner <> OLD.owner)`;

// One trigger per kind of write, each delete before its insert (SQLite gives no order between
// triggers). A row trigger costs a frame per row it fires for, its WHEN evaluated inside (a run insert
// took 58-70 us without one, 70-91 us with, measured alone under load), so inserts, one per fire, are
// placed by the store's one insert statement (SqliteStatements.insertRun); updates and deletes, by any
// path, by these. Migration 24, which rebuilds `runs`, creates them again from this same text.
export const SQLITE_RUN_PLACE_TRIGGERS = `
CREATE TRIGGER runs_moved AFTER UPDATE OF ${MOVES} ON runs
  WHEN OLD.status = 'queued' OR NEW.status = 'queued'
    OR (${IS_ACTIVE("OLD")}) <> (${IS_ACTIVE("NEW")})
    OR (${IS_ACTIVE("OLD")} AND ${ACTIVE_KEY_MOVED})
    OR ${IS_HOLD("OLD")} OR ${IS_HOLD("NEW")}
BEGIN
  ${UNREADY} AND OLD.status = 'queued';
  ${READY} WHERE NEW.status = 'queued';
  ${INACTIVE} AND ${IS_ACTIVE("OLD")} AND (NOT ${IS_ACTIVE("NEW")} OR ${ACTIVE_KEY_MOVED});
  ${ACTIVE} WHERE ${IS_ACTIVE("NEW")} AND (NOT ${IS_ACTIVE("OLD")} OR ${ACTIVE_KEY_MOVED});
  ${UNHOLD} AND ${IS_HOLD("OLD")} AND NOT ${IS_HOLD("NEW")};
  ${HOLD} WHERE ${IS_HOLD("NEW")};
END;

CREATE TRIGGER runs_deleted AFTER DELETE ON runs
  WHEN OLD.status IN ('queued', 'launching', 'running') OR ${IS_HOLD("OLD")}
BEGIN
  ${UNREADY};
  ${INACTIVE};
  ${UNHOLD};
END;
`;

const INDEXES = `
DROP INDEX runs_task_slot_uq;
DROP INDEX runs_thread_slot_uq;
DROP INDEX runs_queue_idx;
DROP INDEX runs_active_task_idx;
DROP INDEX runs_claim_expiry_idx;
DROP INDEX runs_deadline_idx;
DROP INDEX runs_retention_idx;
DROP INDEX runs_owner_listing_idx;
DROP INDEX runs_owner_queue_idx;
DROP INDEX runs_thread_queue_idx;
DROP INDEX runs_thread_hold_idx;
DROP INDEX runs_task_hold_idx;
CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for DESC, id DESC);
CREATE INDEX runs_queued_at_idx ON runs (queued_at);
`;

export const SQLITE_MIGRATION_0017 = TABLES + SQLITE_RUN_PLACE_TRIGGERS + INDEXES;
