/**
 * Contract: runs across tasks (`searchRuns`, docs/storage.md#runs-across-tasks) answer every filter as
 * the ledger says, newest first, owner-scoped, page by page; and an owner command may lock one ended run
 * of its task (`mutateTask`'s `run` option), which a redrive rewrites back to the queue.
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/domain/ports/store.js";
import type { OwnerScope, RunSearch } from "../../../src/domain/ports/queries.js";
import type { Run } from "../../../src/domain/run.js";
import { redriveTaskRun } from "../../../src/domain/task-commands.js";
import type { TargetKind } from "../../../src/domain/target.js";
import type { Task } from "../../../src/domain/task.js";
import {
  ALICE_SCOPE,
  ALL,
  BOB,
  BOB_SCOPE,
  minute,
  onceAt,
  handlerTarget,
  webhookTarget,
} from "../fixtures.js";
import {
  admitDue,
  backfillRuns,
  claimAndLaunch,
  insertTask,
  ledger,
  recordCompletion,
  reloadRun,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const ALLOW = { overlap: "allow_all" as const };

interface Fleet {
  readonly tasks: readonly Task[];
  readonly runs: readonly Run[];
  readonly kindOf: (run: Run) => TargetKind;
}

/**
 * Alice's agent, webhook and handler tasks and Bob's agent task, with scheduled, manual and backfill
 * runs that end succeeded, failed or cancelled, some launched late, some still queued.
 */
async function fleet(store: Store): Promise<Fleet> {
  const agent = await insertTask(store, { options: ALLOW });
  const webhook = await insertTask(store, { target: webhookTarget(), options: ALLOW });
  const handler = await insertTask(store, {
    target: handlerTarget("report"),
    schedule: onceAt(minute(600)),
    options: ALLOW,
  });
  const bobs = await insertTask(store, { owner: BOB, options: ALLOW });
  await admitDue(store, minute(2));
  await triggerRun(store, ALL, webhook.id, "w1", minute(2, 500));
  await triggerRun(store, ALL, handler.id, "h1", minute(2, 600));
  await backfillRuns(store, ALL, agent.id, { from: minute(-3), to: minute(-1) }, minute(2, 700));
  // Launched at 4 minutes: the scheduled runs of minutes 0..2 are late (late_after 60 s), the rest not.
  const launched = await claimAndLaunch(store, minute(4), {
    limit: 6,
    handlerNames: new Set(["report"]),
  });
  for (const [i, run] of launched.entries()) {
    const status = i % 3 === 0 ? "failed" : i % 3 === 1 ? "succeeded" : "cancelled";
    await recordCompletion(store, run.id, { status }, minute(5, i));
  }
  await triggerRun(store, ALL, agent.id, "a-later", minute(6));
  const tasks = [agent, webhook, handler, bobs];
  const runs = (await Promise.all(tasks.map((task) => ledger(store, task.id)))).flat();
  const kinds = new Map(tasks.map((task) => [task.id, task.target.kind]));
  return { tasks, runs, kindOf: (run) => kinds.get(run.taskId) ?? "agent" };
}

function newestFirst(a: Run, b: Run): number {
  if (a.scheduledFor !== b.scheduledFor) return b.scheduledFor - a.scheduledFor;
  return a.id < b.id ? 1 : -1;
}

function expected(f: Fleet, scope: OwnerScope, s: Omit<RunSearch, "limit">): Run[] {
  const within = (v: number | null, after?: number, before?: number): boolean =>
    (after === undefined && before === undefined) ||
    (v !== null && (after === undefined || v >= after) && (before === undefined || v < before));
  return f.runs
    .filter((run) => scope.kind === "all" || run.owner === scope.owner)
    .filter((run) => s.statuses === undefined || s.statuses.includes(run.status))
    .filter((run) => s.taskId === undefined || run.taskId === s.taskId)
    .filter((run) => s.targetKind === undefined || f.kindOf(run) === s.targetKind)
    .filter((run) => s.trigger === undefined || run.trigger === s.trigger)
    .filter((run) => s.late === undefined || run.late === s.late)
    .filter((run) => within(run.scheduledFor, s.scheduledAfter, s.scheduledBefore))
    .filter((run) => within(run.finishedAt, s.finishedAfter, s.finishedBefore))
    .sort(newestFirst);
}

/** Every page of a search, `limit` at a time. */
async function allPages(
  store: Store,
  scope: OwnerScope,
  search: Omit<RunSearch, "limit">,
  limit: number,
): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await store.runs.searchRuns(scope, {
      ...search,
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    expect(result.items.length).toBeLessThanOrEqual(limit);
    runs.push(...result.items);
    if (result.nextCursor === null) return runs;
    cursor = result.nextCursor;
  }
  throw new Error("the search never ended");
}

export function describeRunSearch(ctx: ContractContext): void {
  describe("runs across tasks", () => {
    it("answers each filter and their combinations as the ledger does, page by page", async () => {
      const store = ctx.store();
      const f = await fleet(store);
      const [agent, webhook] = f.tasks;
      expect(f.runs.some((run) => run.late)).toBe(true);
      expect(new Set(f.runs.map((run) => run.status)).size).toBeGreaterThanOrEqual(4);
      const searches: Omit<RunSearch, "limit">[] = [
        {},
        { statuses: ["failed"] },
        { statuses: ["failed", "cancelled"] },
        { statuses: ["queued"] },
        { taskId: agent!.id },
        { taskId: webhook!.id, statuses: ["succeeded", "failed"] },
        { targetKind: "webhook" },
        { targetKind: "handler", statuses: ["failed", "succeeded", "cancelled"] },
        { targetKind: "agent", statuses: ["failed"] },
        { trigger: "manual" },
        { trigger: "backfill" },
        { trigger: "scheduled", late: false },
        { late: true },
        { late: true, statuses: ["failed"] },
        { scheduledAfter: minute(0), scheduledBefore: minute(2) },
        { finishedAfter: minute(5), finishedBefore: minute(5, 3) },
        { finishedAfter: minute(5), statuses: ["failed"], targetKind: "agent" },
      ];
      for (const search of searches) {
        for (const scope of [ALICE_SCOPE, ALL]) {
          const want = expected(f, scope, search).map((run) => run.id);
          const label = `${JSON.stringify(search)} as ${scope.kind}`;
          expect(
            (await allPages(store, scope, search, 200)).map((r) => r.id),
            label,
          ).toEqual(want);
          expect(
            (await allPages(store, scope, search, 2)).map((r) => r.id),
            label,
          ).toEqual(want);
        }
      }
    });

    it("returns the runs as stored, and shows another owner's runs to nobody else", async () => {
      const store = ctx.store();
      const f = await fleet(store);
      const bobs = f.tasks[3]!;
      const page = await store.runs.searchRuns(BOB_SCOPE, { limit: 200 });
      expect(page.items.length).toBeGreaterThan(0);
      expect(page.items.every((run) => run.owner === BOB)).toBe(true);
      for (const run of page.items) expect(run).toEqual(await reloadRun(store, run.id));
      expect(await store.runs.searchRuns(ALICE_SCOPE, { taskId: bobs.id, limit: 10 })).toEqual({
        items: [],
        nextCursor: null,
      });
    });

    it("keeps the target kind a run was written with", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { target: webhookTarget(), options: ALLOW });
      const run = await triggerRun(store, ALL, task.id, "k", minute(1));
      const found = await store.runs.searchRuns(ALICE_SCOPE, {
        targetKind: "webhook",
        limit: 10,
      });
      expect(found.items.map((r) => r.id)).toEqual([run!.id]);
      expect(
        (await store.runs.searchRuns(ALICE_SCOPE, { targetKind: "agent", limit: 10 })).items,
      ).toEqual([]);
    });

    it("refuses a cursor it did not make", async () => {
      const store = ctx.store();
      await expect(
        store.runs.searchRuns(ALICE_SCOPE, { limit: 10, cursor: "not-a-cursor" }),
      ).rejects.toMatchObject({ code: "validation_failed" });
    });
  });

  describe("an owner command on one ended run", () => {
    it("lets one of two concurrent redrives of a run queue it, and refuses the other", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: ALLOW });
      await triggerRun(store, ALL, task.id, "k", minute(1));
      const [launched] = await claimAndLaunch(store, minute(1));
      await recordCompletion(store, launched!.id, { status: "failed" }, minute(2));
      const redrive = () =>
        store.tasks.mutateTask(
          ALL,
          task.id,
          (locked) => {
            const outcome = redriveTaskRun(locked.task, locked.activeRuns, locked.run!, minute(3));
            return { runUpdates: outcome.runUpdates, result: () => outcome.run };
          },
          { run: launched!.id },
        );
      const outcomes = await Promise.allSettled([redrive(), redrive()]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
      const refused = outcomes.find((o) => o.status === "rejected");
      expect(refused?.reason).toMatchObject({ code: "illegal_transition", status: "queued" });
      expect(await reloadRun(store, launched!.id)).toMatchObject({ status: "queued", attempt: 1 });
    });

    it("reads the run under the task's lock, and null for another task's run", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: ALLOW });
      const other = await insertTask(store, { options: ALLOW });
      const run = await triggerRun(store, ALL, task.id, "k", minute(1));
      const seen = await store.tasks.mutateTask(
        ALL,
        task.id,
        (locked) => ({ result: () => locked.run }),
        {
          run: run!.id,
        },
      );
      expect(seen).toEqual(run);
      const foreign = await store.tasks.mutateTask(
        ALL,
        other.id,
        (locked) => ({ result: () => locked.run }),
        { run: run!.id },
      );
      expect(foreign).toBeNull();
    });

    it("puts a failed run back in the queue, same row and key, claimed again as the next attempt", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: ALLOW });
      await triggerRun(store, ALL, task.id, "k", minute(1));
      const [launched] = await claimAndLaunch(store, minute(1));
      await recordCompletion(store, launched!.id, { status: "failed", error: "boom" }, minute(2));
      const failed = await reloadRun(store, launched!.id);
      expect(failed).toMatchObject({ status: "failed", attempt: 1, failures: 1 });
      const redriven = await store.tasks.mutateTask(
        ALL,
        task.id,
        (locked) => {
          const outcome = redriveTaskRun(locked.task, locked.activeRuns, locked.run!, minute(3));
          return { runUpdates: outcome.runUpdates, result: () => outcome.run };
        },
        { run: failed.id },
      );
      const stored = await reloadRun(store, failed.id);
      expect(stored).toEqual(redriven);
      expect(stored).toMatchObject({
        status: "queued",
        attempt: 1,
        failures: 1,
        idempotencyKey: failed.idempotencyKey,
        queuedAt: minute(3),
        finishedAt: null,
        launchedAt: null,
      });
      const [again] = await claimAndLaunch(store, minute(4));
      expect(again).toMatchObject({ id: failed.id, attempt: 2, status: "running" });
      // Past max_attempts (1): the redriven attempt's failure ends it, and failures keeps counting.
      await recordCompletion(store, again!.id, { status: "failed" }, minute(5));
      expect(await reloadRun(store, failed.id)).toMatchObject({ status: "failed", failures: 2 });
      expect((await ledger(store, task.id)).length).toBe(1);
    });
  });
}
