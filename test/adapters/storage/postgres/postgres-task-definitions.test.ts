/**
 * The claim's narrow read on PostgreSQL (docs/storage.md#the-claim-reads-narrow-rows): a claimed run's
 * task is its definition as held by the store at the row's stamp and its state as the claim read it, so
 * it is the task as stored at that moment, whether the definition was held, read on a miss, changed by an
 * edit (a new version) or by a secret's rotation or a deletion (same version, a new row).
 */
import { afterAll, describe, expect, it } from "vitest";
import { rotateTaskSecret } from "../../../../src/domain/task-secret.js";
import type { Store } from "../../../../src/domain/ports/store.js";
import type { TaskId } from "../../../../src/domain/ids.js";
import type { Task } from "../../../../src/domain/task.js";
import { ALL, minute, webhookTarget } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  commandMutation,
  edit,
  insertTask,
  recordCompletion,
  recordLaunch,
  reload,
} from "../../../contract/store-steps.js";
import { CLEAR_SECRETS } from "../../../../src/adapters/storage/shared/secret-keyring.js";
import { TaskDefinitions } from "../../../../src/adapters/storage/postgres/postgres-task-definitions.js";
import { taskStateNames } from "../../../../src/adapters/storage/postgres/postgres-rows.js";
import type { PostgresClient } from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../../helpers/postgres.js";

let database: Promise<PostgresTestDatabase> | null = null;
afterAll(async () => {
  if (database !== null) await (await database).drop();
});

/**
 * Admits the occurrence of minute `n` on `admitter`, claims it on `claimer` and finishes it; the claimed
 * task, checked to be the task as stored when it was claimed.
 */
async function fire(admitter: Store, claimer: Store, id: TaskId, n: number): Promise<Task> {
  const admitted = await admitDue(admitter, minute(n));
  expect(admitted.queuedRuns).toHaveLength(1);
  const stored = await reload(admitter, id);
  const claimed = await claimDue(claimer, minute(n));
  expect(claimed).toHaveLength(1);
  const [item] = claimed;
  await recordLaunch(claimer, item!, minute(n));
  await recordCompletion(claimer, item!.run.id, { status: "succeeded" }, minute(n));
  expect(item!.task).toEqual(stored);
  return item!.task;
}

describe("the claim's narrow read on PostgreSQL", () => {
  it("claims each run with its task as stored, its definition held or read again when its row changed", async () => {
    database ??= createPostgresTestDatabase();
    const db = await database;
    const schema = db.freshSchema();
    // Two stores on one schema, as two replicas: `admitter` admits (and so holds each definition it
    // read), `claimer` only claims (it holds a definition only once a claim of its own read it).
    const admitter = await db.openStore({ schema });
    const claimer = await db.openStore({ schema });
    try {
      const task = await insertTask(admitter, { target: webhookTarget() });
      // A miss: read with the claim, then held.
      await fire(admitter, claimer, task.id, 1);
      // Held at the same version and row: the state (run count, last run) is the claim's, not the held one's.
      expect((await fire(admitter, claimer, task.id, 2)).runCount).toBe(1);

      // A rotation writes the definition's row without a new version.
      await admitter.tasks.mutateTask(ALL, task.id, ({ task: current }) =>
        commandMutation(
          rotateTaskSecret(current, { secret: "whsec_rotated", now: minute(2, 500), graceMs: 0 }),
        ),
      );
      expect((await fire(admitter, claimer, task.id, 3)).webhookSecret).toBe("whsec_rotated");

      // An edit: a new version.
      await edit(admitter, ALL, task.id, { title: "renamed" }, minute(3, 500));
      expect((await fire(admitter, claimer, task.id, 4)).title).toBe("renamed");
    } finally {
      await admitter.close();
      await claimer.close();
    }
  });
});

/** A whole task row as `taskSelectList` reads it, with its definition stamp. */
function taskRow(id: string, stamp: string, title = "t"): Record<string, unknown> {
  return {
    id,
    owner: "alice",
    title,
    description: null,
    schedule: JSON.stringify({
      type: "once",
      runAt: 1_900_000_000_000,
      localRunAt: null,
      timezone: "UTC",
      startAt: null,
      endAt: null,
      maxRuns: null,
      jitterMs: 0,
    }),
    target: JSON.stringify({ kind: "handler", name: "noop", input: null }),
    context: JSON.stringify({ mode: "fresh_thread_per_run" }),
    options: JSON.stringify({
      overlap: "queue",
      catchUp: { windowMs: 0, policy: "skip" },
      lateAfterMs: 1000,
      retry: { maxAttempts: 1, initialMs: 0, maxDelayMs: 0 },
      runTimeoutMs: 0,
      queueTimeoutMs: 0,
    }),
    metadata: "{}",
    webhook_secret: "whsec",
    retiring_secret: null,
    retiring_until: null,
    created_at: "1800000000000",
    updated_at: "1800000000000",
    deleted_at: null,
    task_key: null,
    task_group: null,
    version: 1,
    status: "enabled",
    next_run_at: null,
    decided_through: "1900000000000",
    admitted_count: "1",
    run_count: "0",
    defect_at: null,
    last_run_at: null,
    last_run_id: null,
    last_error: null,
    def_stamp: stamp,
  };
}

describe("TaskDefinitions", () => {
  it("holds a bounded number of definitions, forgetting the least recently used first", async () => {
    const definitions = new TaskDefinitions(
      {
        secrets: CLEAR_SECRETS,
        tasksTable: "tasks",
        taskStateTable: "task_state",
        calendarVersionsTable: "calendar_versions",
      },
      2,
    );
    const read: string[][] = [];
    // A client that answers the read of the definitions not held, and notes which were read.
    const client = {
      query: (_statement: unknown, values: readonly unknown[]) => {
        const ids = values[0] as string[];
        read.push(ids);
        return Promise.resolve({ rows: ids.map((id) => taskRow(id, "1")), rowCount: ids.length });
      },
    } as unknown as PostgresClient;
    const claim = (ids: readonly string[]) =>
      definitions.tasksOf(
        client,
        ids.map((id) => ({ ...taskRow(id, "1"), task_id: id })),
        { idColumn: "task_id", stampColumn: "def_stamp", names: taskStateNames("") },
      );
    definitions.taskFromRow(taskRow("a", "1"));
    definitions.taskFromRow(taskRow("b", "1"));
    await claim(["a"]); // a is now the most recently used
    definitions.taskFromRow(taskRow("c", "1")); // b is forgotten
    expect(definitions.size).toBe(2);
    expect(read).toEqual([]);
    const tasks = await claim(["a", "b", "c"]);
    expect(tasks.map((t) => t.id)).toEqual(["a", "b", "c"]);
    expect(read).toEqual([["b"]]);
    expect(definitions.misses).toBe(1);
    // A new stamp (a rotation: same version) is a miss too.
    definitions.taskFromRow(taskRow("c", "2", "renamed"));
    expect((await claim(["c"]))[0]?.title).toBe("t");
    expect(read).toEqual([["b"], ["c"]]);
  });
});
