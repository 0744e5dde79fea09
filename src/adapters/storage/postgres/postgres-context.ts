/**
 * What every repository of one store shares: the pool, the schema, the id minter and the SQL built once
 * for that schema.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { PostgresPool, PostgresQueryable } from "./postgres-pool.js";
import { RunSql } from "./postgres-run-writes.js";
import { TaskDefinitions } from "./postgres-task-definitions.js";
import type { SchemaName } from "./postgres-schema-name.js";

/** The channel `mutateTask`, `insertTask` and completion writes notify; the coordinator listens on it. */
export const WAKE_CHANNEL = "punctual_wake";

export interface PostgresContext {
  readonly pool: PostgresPool;
  readonly schema: SchemaName;
  readonly newId: () => string;
  readonly runSql: RunSql;
  /** `tasks` qualified by the schema: the definitions, written by owner commands only. */
  readonly tasksTable: string;
  /** `task_state` qualified by the schema: what a fire writes (docs/storage.md#tasks-and-task_state). */
  readonly taskStateTable: string;
  /** Whether writes that create work `NOTIFY` the wake channel. */
  readonly notifies: boolean;
  /** How the tasks' signing secrets are stored (docs/security.md#secrets-at-rest). */
  readonly secrets: SecretSealer;
  /** The definitions this store last read, by task (what a claim's narrow read takes its tasks from). */
  readonly definitions: TaskDefinitions;
}

export function postgresContext(args: {
  pool: PostgresPool;
  schema: SchemaName;
  newId: () => string;
  notifies: boolean;
  secrets: SecretSealer;
}): PostgresContext {
  const tables = {
    tasksTable: `${args.schema.quoted}.tasks`,
    taskStateTable: `${args.schema.quoted}.task_state`,
  };
  return {
    ...args,
    ...tables,
    runSql: new RunSql(args.schema),
    definitions: new TaskDefinitions({
      ...tables,
      secrets: args.secrets,
      calendarVersionsTable: `${args.schema.quoted}.calendar_versions`,
    }),
  };
}

/** Queues a wake-up on `WAKE_CHANNEL`; inside a transaction it is delivered at commit. */
export async function wake(
  ctx: PostgresContext,
  db: PostgresQueryable,
  payload: string,
): Promise<void> {
  if (!ctx.notifies) return;
  await db.query("SELECT pg_notify($1::text, $2::text)", [WAKE_CHANNEL, payload]);
}

/**
 * The one place a whole task is read: `tasks` (the definition, aliased `def`) joined by primary key to its
 * `task_state` row (aliased `state`), the columns `taskSelectList(def, state)` reads. Append `WHERE ...`.
 */
export function taskSource(
  ctx: Pick<PostgresContext, "tasksTable" | "taskStateTable">,
  def = "t",
  state = "s",
): string {
  return `${ctx.tasksTable} AS ${def} JOIN ${ctx.taskStateTable} AS ${state} ON ${state}.task_id = ${def}.id`;
}
