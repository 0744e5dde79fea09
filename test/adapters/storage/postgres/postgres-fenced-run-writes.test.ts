/**
 * A batch of launches and verdicts is written by one fenced statement after one read, with no
 * transaction (docs/storage.md#the-fenced-run-write); a run that something else wrote between that read
 * and the write (another claim token, a freed slot, an edited task) misses the fence and goes through the
 * locking path instead, which refuses a stale token as before (lease_lost), while the batch's other runs
 * and their tasks' bookkeeping are written by the fenced statement. A run whose request carries what its
 * writer knows of it (`expect`: the run as claimed, the task's context it launched with) is not read at
 * all: the statement checks what the decision depended on, and a run that moved on since (cancelled,
 * claimed again, redriven, its task edited) is answered by the locking path exactly as without it.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type {
  PostgresClient,
  PostgresPool,
  PostgresStatement,
} from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import type { PostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type {
  ClaimedRun,
  RunChangeRequest,
  RunChangeResult,
} from "../../../../src/domain/ports/run-repository.js";
import { runTaskContext } from "../../../../src/domain/run-change.js";
import {
  applyLaunchOutcome,
  completeRun,
  heartbeatRun,
} from "../../../../src/domain/run-transitions.js";
import type { Task } from "../../../../src/domain/task.js";
import { ALL, minute, onceAt } from "../../../contract/fixtures.js";
import {
  POLICY,
  cancelOneRun,
  changeOne,
  claimDue,
  edit,
  recordCompletion,
  insertTask,
  reload,
  reloadRun,
  triggerRun,
} from "../../../contract/store-steps.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

const textOf = (statement: string | PostgresStatement) =>
  typeof statement === "string" ? statement : statement.text;

/** Records every statement sent; runs `beforeWrite` once just before the next fenced write. */
class Recorder {
  readonly sent: string[] = [];
  /** The run ids the last fenced write wrote. */
  written: string[] | null = null;
  beforeWrite: (() => Promise<void>) | null = null;

  wrap(pool: PostgresPool): PostgresPool {
    const wrapClient = (client: PostgresClient): PostgresClient => ({
      query: (statement, values) => {
        this.sent.push(textOf(statement));
        return client.query(statement, values);
      },
      release: (destroy) => {
        client.release(destroy);
      },
      on: ((event: "error", listener: (error: Error) => void) =>
        client.on(event, listener)) as PostgresClient["on"],
      off: (event, listener) => client.off(event, listener),
    });
    return {
      query: async (statement, values) => {
        const text = textOf(statement);
        this.sent.push(text);
        if (!text.includes("locked AS MATERIALIZED")) return pool.query(statement, values);
        const hook = this.beforeWrite;
        this.beforeWrite = null;
        if (hook !== null) await hook();
        const result = await pool.query(statement, values);
        // The write answers the runs it refused: the others of its first parameter (the ids sent, as
        // array text of plain ids) were written.
        const missed = (result.rows[0] as { missed: string[] }).missed;
        const sent = (values?.[0] as string).slice(2, -2).split('","');
        this.written = sent.filter((id) => !missed.includes(id)).sort();
        return result;
      },
      connect: async () => wrapClient(await pool.connect()),
      end: () => pool.end(),
    };
  }
}

function launch(claimed: ClaimedRun, at: number): RunChangeRequest {
  return {
    id: claimed.run.id,
    token: claimed.run.claimToken!,
    decide: (run, task) =>
      applyLaunchOutcome(
        run,
        { kind: "launched", targetRunId: `t-${run.id}` },
        { now: minute(1, at), task, policy: POLICY },
      ),
  };
}

function fail(claimed: ClaimedRun, at: number): RunChangeRequest {
  return {
    id: claimed.run.id,
    decide: (run, task) =>
      completeRun(run, { status: "failed", error: `boom ${at}` }, { now: minute(1, at), task }),
  };
}

/** `request` with what its writer knows of the run: as `claimed` claimed it. */
function expecting(claimed: ClaimedRun, request: RunChangeRequest): RunChangeRequest {
  return {
    ...request,
    expect: {
      run: claimed.run,
      task: runTaskContext(claimed.task),
      taskVersion: claimed.task.version,
    },
  };
}

function succeed(claimed: ClaimedRun, at: number): RunChangeRequest {
  return {
    id: claimed.run.id,
    decide: (run, task) =>
      completeRun(run, { status: "succeeded", result: { at } }, { now: minute(1, at), task }),
  };
}

const kinds = (results: readonly RunChangeResult[]) =>
  results.map((r) => (r.kind === "refused" ? r.error.code : r.kind));

describe("postgres: a batch of run changes in one fenced statement", () => {
  const recorder = new Recorder();
  const pool = database.pool(4);
  let store: PostgresStore;
  let schema: string;
  let tasks: Task[];
  let claimed: ClaimedRun[];

  beforeEach(async () => {
    schema = database.freshSchema();
    store = await openPostgresStore({
      newId: createIdGenerator(),
      pool: recorder.wrap(pool),
      schema,
    });
    tasks = [];
    for (let t = 0; t < 2; t++) {
      const task = await insertTask(store, {
        schedule: onceAt(minute(600)),
        options: { overlap: "allow_all" },
      });
      tasks.push(task);
      for (const key of ["a", "b"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
    }
    claimed = [...(await claimDue(store, minute(1), { limit: 4 }))];
    expect(claimed).toHaveLength(4);
    recorder.sent.length = 0;
    recorder.beforeWrite = null;
    recorder.written = null;
  });

  const ofTask = (i: number) => claimed.filter((c) => c.run.taskId === tasks[i]!.id);
  const slotsHeld = async () =>
    (
      await pool.query(
        `SELECT count(*)::int AS n FROM "${schema}".claim_slots WHERE run_id IS NOT NULL`,
      )
    ).rows[0];

  it("writes launches and verdicts with the tasks' bookkeeping in one statement after one read", async () => {
    const [a1, a2] = ofTask(0);
    const [b1, b2] = ofTask(1);
    // Task a's runs launched in the order a2, a1: its last run is a1. Task b: b1 launched and failed,
    // then b2 launched only.
    const requests = [
      launch(a2!, 1),
      launch(a1!, 2),
      launch(b1!, 3),
      fail(b1!, 4),
      launch(b2!, 5),
      fail(a2!, 6),
    ];
    const results = await store.runs.changeRuns(requests);
    expect(kinds(results)).toEqual([
      "changed",
      "changed",
      "changed",
      "changed",
      "changed",
      "changed",
    ]);
    // No transaction, no lock: the read and the fenced write.
    expect(recorder.sent).toHaveLength(2);
    expect(recorder.sent.some((t) => t.startsWith("BEGIN"))).toBe(false);
    expect(recorder.written).toEqual([a1, a2, b1, b2].map((c) => c!.run.id).sort());

    expect((await reloadRun(store, a1!.run.id)).status).toBe("running");
    expect((await reloadRun(store, a2!.run.id)).status).toBe("failed");
    expect((await reloadRun(store, b1!.run.id)).status).toBe("failed");
    expect((await reloadRun(store, b2!.run.id)).status).toBe("running");
    const a = await reload(store, tasks[0]!.id);
    const b = await reload(store, tasks[1]!.id);
    expect([a.runCount, a.lastRunId, a.lastError]).toEqual([2, a1!.run.id, "boom 6"]);
    expect([b.runCount, b.lastRunId, b.lastError]).toEqual([2, b2!.run.id, "boom 4"]);
    // The two failed runs gave their slots back (the slot trigger fired on the fenced statement).
    expect(await slotsHeld()).toEqual({ n: 2 });
  });

  it("sends a run claimed again since the read to the locking path, which refuses its stale token", async () => {
    const [a1] = ofTask(0);
    const [b1] = ofTask(1);
    recorder.beforeWrite = async () => {
      await pool.query(`UPDATE "${schema}".runs SET claim_token = 'another' WHERE id = $1::text`, [
        a1!.run.id,
      ]);
    };
    const results = await store.runs.changeRuns([launch(a1!, 1), launch(b1!, 2)]);
    expect(kinds(results)).toEqual(["lease_lost", "changed"]);
    expect(recorder.written).toEqual([b1!.run.id]);
    expect(recorder.sent.some((t) => t.startsWith("BEGIN"))).toBe(true);
    expect((await reloadRun(store, a1!.run.id)).status).toBe("launching");
    expect((await reloadRun(store, b1!.run.id)).status).toBe("running");
    // Only the written launch counts on its task.
    expect((await reload(store, tasks[0]!.id)).runCount).toBe(0);
    expect((await reload(store, tasks[1]!.id)).runCount).toBe(1);
  });

  it("sends a run whose slot was freed, or whose task was edited, since the read to the locking path", async () => {
    const [a1] = ofTask(0);
    const [b1] = ofTask(1);
    recorder.beforeWrite = async () => {
      // Neither touches the run rows: only the slot and task fences can see these.
      // The slot freed: its lease deleted (migration 31).
      await pool.query(`DELETE FROM "${schema}".claim_slots WHERE run_id = $1::text`, [a1!.run.id]);
      await pool.query(
        `UPDATE "${schema}".task_state SET version = version + 1 WHERE task_id = $1::text`,
        [tasks[1]!.id],
      );
    };
    const results = await store.runs.changeRuns([launch(a1!, 1), launch(b1!, 2)]);
    expect(kinds(results)).toEqual(["changed", "changed"]);
    // Both missed the fence: the fenced statement wrote nothing, the locking path wrote both.
    expect(recorder.written).toEqual([]);
    expect(recorder.sent.some((t) => t.startsWith("BEGIN"))).toBe(true);
    expect((await reload(store, tasks[0]!.id)).runCount).toBe(1);
    expect((await reload(store, tasks[1]!.id)).runCount).toBe(1);
  });

  it("takes a single change, and a batch that wants its tasks whole, to the locking path at once", async () => {
    const [a1, a2] = ofTask(0);
    const statements = async (requests: RunChangeRequest[]) => {
      recorder.sent.length = 0;
      expect(kinds(await store.runs.changeRuns(requests))).toEqual(requests.map(() => "changed"));
      // No fenced read or write: BEGIN, the tasks' lock, the runs' lock, the runs' update, the tasks'
      // bookkeeping and the wake-up when there are some, COMMIT (what a `changeRun` took).
      expect(
        recorder.sent.filter((t) => t.includes("read_xmin") || t.includes("locked AS")),
      ).toEqual([]);
      expect(recorder.sent[0]).toMatch(/^BEGIN/);
      expect(recorder.sent.at(-1)).toMatch(/^COMMIT/);
      return recorder.sent.length;
    };
    // A launch record: its bookkeeping, no wake-up.
    expect(await statements([launch(a1!, 1)])).toBe(6);
    // A verdict that frees the slot: its bookkeeping and a wake-up.
    expect(await statements([succeed(a1!, 2)])).toBe(7);
    // A launch record, then a heartbeat: the run only.
    expect(await statements([launch(a2!, 3)])).toBe(6);
    expect(
      await statements([
        {
          id: a2!.run.id,
          decide: (run, task) => heartbeatRun(run, minute(1, 4), task.options),
        },
      ]),
    ).toBe(5);
    // `withTask`, one run or several: the tasks locked whole, never the fenced statement.
    const [b1, b2] = ofTask(1);
    expect(
      await statements([b1!, b2!].map((c, i) => ({ ...launch(c, 5 + i), withTask: true }))),
    ).toBe(6);
  });

  describe("with the writers' expectations", () => {
    const withRead = () => recorder.sent.some((t) => t.includes("read_xmin FROM"));

    it("writes launches and verdicts in one statement without reading the runs", async () => {
      const [a1, a2] = ofTask(0);
      const [b1, b2] = ofTask(1);
      const requests = [
        expecting(a2!, launch(a2!, 1)),
        expecting(a1!, launch(a1!, 2)),
        expecting(b1!, launch(b1!, 3)),
        fail(b1!, 4),
        expecting(b2!, launch(b2!, 5)),
        succeed(a2!, 6),
      ];
      const results = await store.runs.changeRuns(requests);
      expect(kinds(results)).toEqual(Array<string>(6).fill("changed"));
      // One statement: no read, no transaction.
      expect(recorder.sent).toHaveLength(1);
      expect(withRead()).toBe(false);
      expect(recorder.written).toEqual([a1, a2, b1, b2].map((c) => c!.run.id).sort());

      const a2Row = await reloadRun(store, a2!.run.id);
      expect([a2Row.status, a2Row.result, a2Row.claimToken, a2Row.finishedAt]).toEqual([
        "succeeded",
        { at: 6 },
        null,
        minute(1, 6),
      ]);
      expect(a2Row.launchedAt).toBe(minute(1, 1));
      const b1Row = await reloadRun(store, b1!.run.id);
      expect([b1Row.status, b1Row.error, b1Row.failures]).toEqual(["failed", "boom 4", 1]);
      expect((await reloadRun(store, a1!.run.id)).status).toBe("running");
      expect((await reloadRun(store, b2!.run.id)).targetRunId).toBe(`t-${b2!.run.id}`);
      const a = await reload(store, tasks[0]!.id);
      const b = await reload(store, tasks[1]!.id);
      expect([a.runCount, a.lastRunId, a.lastError]).toEqual([2, a1!.run.id, null]);
      expect([b.runCount, b.lastRunId, b.lastError]).toEqual([2, b2!.run.id, "boom 4"]);
      expect(await slotsHeld()).toEqual({ n: 2 });
    });

    it("answers a run cancelled since its claim as the read would: the launch asks its target to stop", async () => {
      const [a1] = ofTask(0);
      const [b1] = ofTask(1);
      await cancelOneRun(store, a1!.run.id, minute(1, 1));
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([
        expecting(a1!, launch(a1!, 2)),
        expecting(b1!, launch(b1!, 3)),
      ]);
      expect(kinds(results)).toEqual(["changed", "changed"]);
      // The expectation (no cancel) missed the fence: the locking path read the cancel request.
      expect(recorder.written).toEqual([b1!.run.id]);
      const launched = results[0]!;
      expect(launched.kind === "changed" && launched.change.cancelTarget).toBe(true);
      const row = await reloadRun(store, a1!.run.id);
      expect([row.status, row.cancelRequestedAt, row.reason]).toEqual([
        "running",
        minute(1, 1),
        "cancel_requested",
      ]);
    });

    it("books the launch of a run whose verdict overtook it as the read would: the verdict stands", async () => {
      const [a1] = ofTask(0);
      // A callback's verdict, written before the launch answer's flush: the run ended, its claim kept
      // (the same token) so that the launch can still be booked.
      await recordCompletion(store, a1!.run.id, { status: "succeeded" }, minute(1, 1));
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([expecting(a1!, launch(a1!, 2))]);
      expect(kinds(results)).toEqual(["changed"]);
      expect(recorder.written).toEqual([]);
      const row = await reloadRun(store, a1!.run.id);
      expect([row.status, row.claimToken, row.launchedAt]).toEqual([
        "succeeded",
        null,
        minute(1, 1),
      ]);
      expect((await reload(store, tasks[0]!.id)).runCount).toBe(1);
    });

    it("writes a later verdict on the run as its launch wrote it, a heartbeat's deadline or a cancel apart", async () => {
      const [a1, a2] = ofTask(0);
      const [b1] = ofTask(1);
      const launches = await store.runs.changeRuns([
        expecting(a1!, launch(a1!, 1)),
        expecting(a2!, launch(a2!, 1)),
        expecting(b1!, launch(b1!, 1)),
      ]);
      const launched = launches.map((r) => {
        if (r.kind !== "changed") throw new Error("not launched");
        return r.change.run;
      });
      const item = (claimed: ClaimedRun, i: number): ClaimedRun => ({
        ...claimed,
        run: launched[i]!,
      });
      // Since the launch: a2's target beat (its deadline moved), b1 was asked to stop.
      await changeOne(store, {
        id: a2!.run.id,
        decide: (run, task) => heartbeatRun(run, minute(1, 50), task.options),
      });
      await cancelOneRun(store, b1!.run.id, minute(1, 60));
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([
        expecting(item(a1!, 0), succeed(a1!, 100)),
        expecting(item(a2!, 1), succeed(a2!, 100)),
        expecting(item(b1!, 2), succeed(b1!, 100)),
      ]);
      expect(kinds(results)).toEqual(["changed", "changed", "changed"]);
      // a1 and a2 by the one statement (a heartbeat changes nothing a verdict decides on); b1 missed
      // the fence and was read under its lock.
      expect(recorder.written).toEqual([a1!.run.id, a2!.run.id].sort());
      expect(withRead()).toBe(false);
      for (const c of [a1!, a2!]) {
        expect(await reloadRun(store, c.run.id)).toMatchObject({
          status: "succeeded",
          deadlineAt: null,
          result: { at: 100 },
        });
      }
      expect(await reloadRun(store, b1!.run.id)).toMatchObject({
        status: "succeeded",
        cancelRequestedAt: minute(1, 60),
        reason: null,
      });
    });

    it("refuses a stale claim whatever the writer expected: the database checks the token", async () => {
      const [a1, a2] = ofTask(0);
      const [b1] = ofTask(1);
      // a1 was claimed again by another replica (another token, the next attempt); a2 ended and was
      // redriven (queued again, no token); b1's writer claims a token the database never held.
      await pool.query(
        `UPDATE "${schema}".runs SET claim_token = 'another', attempt = attempt + 1 WHERE id = $1::text`,
        [a1!.run.id],
      );
      await pool.query(
        `UPDATE "${schema}".runs SET status = 'failed', claim_token = NULL, claim_expires_at = NULL,` +
          ` finished_at = now() WHERE id = $1::text`,
        [a2!.run.id],
      );
      await pool.query(
        `UPDATE "${schema}".runs SET status = 'queued', finished_at = NULL WHERE id = $1::text`,
        [a2!.run.id],
      );
      const forged = { ...b1!, run: { ...b1!.run, claimToken: "forged" as never } };
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([
        expecting(a1!, launch(a1!, 1)),
        expecting(a2!, launch(a2!, 2)),
        expecting(forged, { ...launch(b1!, 3), token: "forged" as never }),
      ]);
      expect(kinds(results)).toEqual(["lease_lost", "lease_lost", "lease_lost"]);
      expect(recorder.written).toEqual([]);
      expect((await reloadRun(store, a1!.run.id)).claimToken).toBe("another");
      expect((await reloadRun(store, a2!.run.id)).status).toBe("queued");
      expect((await reloadRun(store, b1!.run.id)).status).toBe("launching");
      expect((await reload(store, tasks[0]!.id)).runCount).toBe(0);
    });

    it("decides a verdict by the task's retry policy in force, not the one it launched with", async () => {
      const [a1] = ofTask(0);
      const [b1] = ofTask(1);
      const task = tasks[0]!;
      await edit(
        store,
        ALL,
        task.id,
        { options: { ...task.options, retry: { ...task.options.retry, maxAttempts: 3 } } },
        minute(1, 1),
      );
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([
        expecting(a1!, launch(a1!, 2)),
        fail(a1!, 3),
        expecting(b1!, launch(b1!, 4)),
        fail(b1!, 5),
      ]);
      expect(kinds(results)).toEqual(["changed", "changed", "changed", "changed"]);
      expect(recorder.written).toEqual([b1!.run.id]);
      // Edited to three attempts: the failure is retried, as a read of the task would decide.
      expect((await reloadRun(store, a1!.run.id)).status).toBe("queued");
      expect((await reloadRun(store, b1!.run.id)).status).toBe("failed");
    });

    it("leaves a run its expectation refuses to the locking path, which answers from the row", async () => {
      const [a1] = ofTask(0);
      // The writer thinks the run is at another attempt than it is: refused in memory, but only the
      // row can say so; the locking path reads it and the launch is written.
      const stale = { ...a1!, run: { ...a1!.run, status: "running" as const } };
      recorder.sent.length = 0;
      const results = await store.runs.changeRuns([expecting(stale, launch(a1!, 1))]);
      expect(kinds(results)).toEqual(["changed"]);
      expect(recorder.sent.some((t) => t.startsWith("BEGIN"))).toBe(true);
      expect((await reloadRun(store, a1!.run.id)).status).toBe("running");
    });
  });
});
