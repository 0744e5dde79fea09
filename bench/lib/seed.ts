/**
 * Bulk setup of tasks, bypassing the per-task API call (100,000 to 1,000,000 tasks would take minutes one
 * by one) but not the library's meaning: each distinct task input goes through the library's own
 * parsing (`taskFieldsFromCreate`) and the domain's `createTask`, and the resulting task is turned into a
 * row by the store's own row mapping (`taskToRow` on SQLite, `taskValues` + `taskWrite` on PostgreSQL).
 * Copies of that row differ only in `id` (a fresh time-ordered id) and `webhook_secret` (fresh random
 * bytes), exactly as separate `tasks.create` calls would make them. `checkSeeder` (run first by the bench)
 * proves the rows equal what `scheduler.tasks.create` writes.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { taskFieldsFromCreate } from "../../src/application/shapes/task-input.js";
import { buildPolicy } from "../../src/index.js";
import {
  TASK_COLUMNS as PG_TASK_COLUMNS,
  taskValues,
  taskWrite,
} from "../../src/adapters/storage/postgres/postgres-rows.js";
import { schemaName } from "../../src/adapters/storage/postgres/postgres-schema-name.js";
import { columnArrays } from "../../src/adapters/storage/postgres/postgres-sql.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../src/adapters/storage/sqlite/sqlite-database.js";
import {
  columnList,
  TASK_DEFINITION_COLUMNS as SQLITE_TASK_COLUMNS,
  TASK_STATE_COLUMNS as SQLITE_TASK_STATE_COLUMNS,
  taskToRow,
} from "../../src/adapters/storage/sqlite/sqlite-rows.js";
import { CLEAR_SECRETS } from "../../src/adapters/storage/shared/secret-keyring.js";
import type { TaskRow } from "../../src/adapters/storage/sqlite/sqlite-rows.js";
import { taskId } from "../../src/domain/ids.js";
import { createTask } from "../../src/domain/task-fields.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import type { StoreTarget } from "./store-target.js";

export type SeedTarget = StoreTarget;

/** `count` tasks created from the same user input (what `scheduler.tasks.create(input)` takes). */
export interface TaskVariant {
  readonly input: unknown;
  readonly count: number;
}

export interface SeededVariant {
  /** The task as `createTask` made it (first copy). */
  readonly template: Task;
  /** The ids of its copies (kept only when asked). */
  readonly ids: string[];
}

const BATCH = 5_000;
const policy = buildPolicy({});

export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The task `tasks.create(input)` would make at `now` (same parsing, same domain command). */
export function taskFromInput(input: unknown, now: Instant, id: string, secret: string): Task {
  const fields = taskFieldsFromCreate(input, now, policy.defaultOptions);
  return createTask(fields, {
    id: taskId(id),
    owner: LOCAL_ACTOR.owner,
    now,
    policy,
    webhookSecret: secret,
  });
}

/** Yields batches of copies of each variant's template as rows of the target's mapping. */
function* batches<Row>(
  variants: readonly TaskVariant[],
  now: Instant,
  toRow: (task: Task) => Row,
  stamp: (row: Row, id: string, secret: string) => Row,
  seeded: SeededVariant[],
  keepIds: boolean,
): Generator<Row[]> {
  const newId = createIdGenerator();
  let batch: Row[] = [];
  for (const variant of variants) {
    const template = taskFromInput(variant.input, now, newId(), newSecret());
    const ids: string[] = [];
    seeded.push({ template, ids });
    const templateRow = toRow(template);
    for (let i = 0; i < variant.count; i++) {
      const id = i === 0 ? template.id : newId();
      if (keepIds) ids.push(id);
      batch.push(i === 0 ? templateRow : stamp(templateRow, id, newSecret()));
      if (batch.length >= BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

export interface SeedOptions {
  readonly now: Instant;
  readonly keepIds: boolean;
  readonly onBatch?: (inserted: number) => void;
}

/** Inserts every variant's copies; the schema must exist (a replica has migrated it). */
export async function seedTasks(
  target: SeedTarget,
  variants: readonly TaskVariant[],
  options: SeedOptions,
): Promise<SeededVariant[]> {
  return target.kind === "sqlite"
    ? seedSqlite(target.path, variants, options)
    : seedPostgres(target.url, target.schema, variants, options);
}

function seedSqlite(
  path: string,
  variants: readonly TaskVariant[],
  options: SeedOptions,
): Promise<SeededVariant[]> {
  const db = openSqliteDatabase(path);
  try {
    const insert = db.prepare<[TaskRow]>(
      `INSERT INTO tasks (${columnList(SQLITE_TASK_COLUMNS)}) VALUES (${SQLITE_TASK_COLUMNS.map((c) => `@${c}`).join(", ")})`,
    );
    // A task is two rows on SQLite: its definition and its state (docs/storage.md#task-state-on-sqlite).
    const insertState = db.prepare<[TaskRow]>(
      `INSERT INTO task_state (task_id, ${columnList(SQLITE_TASK_STATE_COLUMNS)}) VALUES (@id, ${SQLITE_TASK_STATE_COLUMNS.map((c) => `@${c}`).join(", ")})`,
    );
    const insertBatch = db.transaction((rows: TaskRow[]) => {
      for (const row of rows) {
        insert.run(row);
        insertState.run(row);
      }
    });
    const seeded: SeededVariant[] = [];
    let inserted = 0;
    const rows = batches(
      variants,
      options.now,
      (task) => taskToRow(task, CLEAR_SECRETS),
      (row, id, secret) => ({ ...row, id, webhook_secret: secret }),
      seeded,
      options.keepIds,
    );
    for (const batch of rows) {
      insertBatch.immediate(batch);
      inserted += batch.length;
      options.onBatch?.(inserted);
    }
    return Promise.resolve(seeded);
  } finally {
    db.close();
  }
}

async function seedPostgres(
  url: string,
  schema: string | undefined,
  variants: readonly TaskVariant[],
  options: SeedOptions,
): Promise<SeededVariant[]> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on("error", () => undefined);
  const idAt = PG_TASK_COLUMNS.findIndex((c) => c.name === "id");
  const secretAt = PG_TASK_COLUMNS.findIndex((c) => c.name === "webhook_secret");
  const quoted = schemaName(schema).quoted;
  const sql = taskWrite("insert", `${quoted}.tasks`, `${quoted}.task_state`);
  try {
    const seeded: SeededVariant[] = [];
    let inserted = 0;
    const rows = batches(
      variants,
      options.now,
      (task) => taskValues(task, CLEAR_SECRETS),
      (row, id, secret) => {
        const copy = [...row];
        copy[idAt] = id;
        copy[secretAt] = secret;
        return copy;
      },
      seeded,
      options.keepIds,
    );
    // Two statements in flight: the server parses one batch while the next is serialised.
    const inFlight = new Set<Promise<void>>();
    for (const batch of rows) {
      const write = pool.query(sql, columnArrays(PG_TASK_COLUMNS, batch)).then(() => {
        inserted += batch.length;
        options.onBatch?.(inserted);
      });
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write)).catch(() => undefined);
      if (inFlight.size >= 2) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    // As autovacuum would soon after a bulk load: the planner sees the table as it is.
    await pool.query(`ANALYZE ${quoted}.tasks, ${quoted}.task_state`);
    return seeded;
  } finally {
    await pool.end();
  }
}
