/**
 * Batches of run changes (`changeRuns`) from four replicas on one PostgreSQL schema, each with its own
 * pool, over the same runs in different orders, beside single changes and owner commands on the same
 * tasks: no deadlock (tasks, then runs, both in id order), each launch recorded exactly once (the other
 * replicas' stale tokens are refused), and every task's run_count equal to the launches recorded; the
 * same when each launch carries the run as claimed (`expect`), so that no replica reads it before writing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { ClaimedRun, RunChangeRequest } from "../../src/domain/ports/run-repository.js";
import { runTaskContext } from "../../src/domain/run-change.js";
import { applyLaunchOutcome, completeRun } from "../../src/domain/run-transitions.js";
import type { Task } from "../../src/domain/task.js";
import { ALL, minute, onceAt } from "../contract/fixtures.js";
import {
  POLICY,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  reload,
  triggerRun,
} from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const REPLICAS = 4;
const TASKS = 6;
const RUNS_PER_TASK = 4;
const runnable = await raceTestsRunnable("test/race/postgres-run-batches.test.ts");

/** A deterministic shuffle (no Math.random in tests that must replay). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function launchAndComplete(
  claimed: ClaimedRun,
  at: number,
  expecting: boolean,
): RunChangeRequest[] {
  const now = minute(1, at);
  const expectation = {
    run: claimed.run,
    task: runTaskContext(claimed.task),
    taskVersion: claimed.task.version,
  };
  return [
    {
      id: claimed.run.id,
      token: claimed.run.claimToken!,
      ...(expecting ? { expect: expectation } : {}),
      decide: (run, task) =>
        applyLaunchOutcome(
          run,
          { kind: "launched", targetRunId: `t-${claimed.run.id}` },
          { now, task, policy: POLICY },
        ),
    },
    {
      id: claimed.run.id,
      decide: (run, task) =>
        run.status === "running" ? completeRun(run, { status: "succeeded" }, { now, task }) : null,
    },
  ];
}

describe.skipIf(!runnable)(`postgres: run change batches from ${REPLICAS} replicas`, () => {
  let database: PostgresTestDatabase;
  let stores: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  beforeEach(async () => {
    stores = await openReplicaStores(database, REPLICAS, database.freshSchema());
  });

  afterEach(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it.each([
    ["read", false],
    ["taken from the claim", true],
  ])(
    "records each launch once, without deadlock, beside single changes and owner commands (runs %s)",
    async (_, expecting) => {
      const first = stores[0]!;
      const tasks: Task[] = [];
      for (let t = 0; t < TASKS; t++) {
        const task = await insertTask(first, {
          schedule: onceAt(minute(600)),
          options: { overlap: "allow_all" },
        });
        tasks.push(task);
        for (let r = 0; r < RUNS_PER_TASK; r++) {
          await triggerRun(first, ALL, task.id, `k${r}`, minute(0, 1 + t * RUNS_PER_TASK + r));
        }
      }
      const claimed = await claimDue(first, minute(1), {
        limit: TASKS * RUNS_PER_TASK,
        maxConcurrentRuns: 100,
      });
      expect(claimed).toHaveLength(TASKS * RUNS_PER_TASK);

      const batches = stores.map((store, i) =>
        store.runs.changeRuns(
          shuffled(claimed, i + 1).flatMap((c) => launchAndComplete(c, 10 + i, expecting)),
        ),
      );
      // Beside them: owner commands that lock the same tasks, and single verdicts on the same runs.
      const commands = tasks.map((task, i) =>
        triggerRun(stores[i % REPLICAS]!, ALL, task.id, "extra", minute(1, 5)),
      );
      const singles = shuffled(claimed, 99)
        .slice(0, 6)
        .map((c, i) =>
          recordCompletion(stores[i % REPLICAS]!, c.run.id, { status: "succeeded" }, minute(1, 20)),
        );
      const results = await Promise.all(batches);
      await Promise.all([...commands, ...singles]);

      for (const c of claimed) {
        const launches = results.filter((batch) =>
          batch.some(
            (result) =>
              result.kind === "changed" &&
              result.change.run.id === c.run.id &&
              result.change.taskLaunch !== undefined,
          ),
        );
        expect(launches).toHaveLength(1);
      }
      for (const batch of results) {
        for (const result of batch) {
          if (result.kind === "refused") expect(result.error.code).toBe("lease_lost");
        }
      }
      const claimedIds = new Set<string>(claimed.map((c) => c.run.id));
      for (const task of tasks) {
        expect((await reload(first, task.id)).runCount).toBe(RUNS_PER_TASK);
        const runs = await ledger(first, task.id);
        const launched = runs.filter((run) => claimedIds.has(run.id));
        expect(launched.map((run) => run.status)).toEqual(
          Array.from({ length: RUNS_PER_TASK }, () => "succeeded"),
        );
      }
    },
  );
});
