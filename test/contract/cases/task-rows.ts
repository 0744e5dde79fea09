/** Contract: task rows round-trip exactly, stay owner-scoped, and list with filters and stable pages. */
import { describe, expect, it } from "vitest";
import { runId } from "../../../src/domain/ids.js";
import type { OwnerScope, TaskQuery } from "../../../src/domain/ports/queries.js";
import { durationMs } from "../../../src/domain/time.js";
import type { Task } from "../../../src/domain/task.js";
import {
  ALICE,
  ALICE_SCOPE,
  ALL,
  BOB,
  BOB_SCOPE,
  agentTarget,
  at,
  buildTask,
  cron,
  every,
  handlerTarget,
  minute,
  onceAt,
  reuseThread,
  webhookTarget,
} from "../fixtures.js";
import { insertTask, insertTasks, pause, remove } from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

async function listAll(
  ctx: ContractContext,
  query: TaskQuery,
  scope: OwnerScope = ALL,
): Promise<Task[]> {
  const page = await ctx.store().tasks.listTasks(scope, query);
  expect(page.nextCursor).toBeNull();
  return [...page.items];
}

export function describeTaskRows(ctx: ContractContext): void {
  describe("task rows", () => {
    it("returns an inserted task exactly as it was written", async () => {
      const task = buildTask({
        title: "Weekday digest",
        description: "Summarise the inbox ✉ before the stand-up",
        schedule: {
          type: "cron",
          cron: "30 9 * * 1-5",
          timezone: "Europe/Berlin",
          start_at: "2030-02-01T00:00:00Z",
          end_at: "2031-01-01T00:00:00.250Z",
          max_runs: 10,
          jitter: "PT30S",
        },
        target: webhookTarget(),
        context: reuseThread("digest-thread"),
        options: {
          overlap: "buffer_one",
          catchUp: { policy: "all", windowMs: durationMs(7_200_000) },
          retry: { maxAttempts: 3 },
        },
        metadata: { team: "ops", "cost-centre": "42" },
        createdAt: at(123),
      });
      await ctx.store().tasks.insertTask(task);
      expect(await ctx.store().tasks.findTask(ALICE_SCOPE, task.id)).toEqual(task);
    });

    it("round-trips once and interval schedules to the same instants", async () => {
      const tasks = await insertTasks(
        ctx.store(),
        { schedule: onceAt(minute(90)) },
        { schedule: { type: "once", run_at: "2030-01-07T16:15:16", timezone: "Asia/Kolkata" } },
        { schedule: every("PT5M"), createdAt: at(500) },
        { schedule: cron("0 2 * * *", "America/New_York"), target: handlerTarget("report") },
      );
      for (const task of tasks) {
        expect(await ctx.store().tasks.findTask(ALL, task.id)).toEqual(task);
      }
    });

    it("keeps instants exact to the millisecond and nulls as nulls", async () => {
      const task: Task = {
        ...buildTask({ createdAt: at(1) }),
        nextRunAt: at(59_999),
        decidedThrough: at(7),
        admittedCount: 2,
        lastRunAt: at(31_415),
        lastRunId: runId("run-from-elsewhere"),
        runCount: 3,
        lastError: 'failed with "quotes", a \\ backslash and ünïcödé',
        version: 7,
        updatedAt: at(987),
        description: null,
      };
      await ctx.store().tasks.insertTask(task);
      const stored = await ctx.store().tasks.findTask(ALL, task.id);
      expect(stored).toEqual(task);
      expect(stored?.deletedAt).toBeNull();
      expect(stored?.description).toBeNull();
    });

    it("keeps its rows apart from the objects callers hold", async () => {
      const task = buildTask({ metadata: { team: "ops" } });
      const original = structuredClone(task);
      await ctx.store().tasks.insertTask(task);
      const mutable = task as unknown as { title: string; metadata: Record<string, string> };
      mutable.title = "changed after insert";
      mutable.metadata.team = "changed after insert";
      const read = await ctx.store().tasks.findTask(ALL, task.id);
      try {
        (read as unknown as { title: string }).title = "changed after read";
      } catch {
        // A store may hand out frozen rows; either way the stored row must not change.
      }
      expect(await ctx.store().tasks.findTask(ALL, task.id)).toEqual(original);
    });

    it("refuses a second task with the same id", async () => {
      const task = await insertTask(ctx.store());
      await expect(ctx.store().tasks.insertTask({ ...task, title: "Impostor" })).rejects.toThrow();
      expect((await ctx.store().tasks.findTask(ALL, task.id))?.title).toBe(task.title);
    });

    it("hides another owner's task, and shows every task to the all scope", async () => {
      const task = await insertTask(ctx.store(), { owner: ALICE });
      expect(await ctx.store().tasks.findTask(BOB_SCOPE, task.id)).toBeNull();
      expect(await ctx.store().tasks.findTask(ALICE_SCOPE, task.id)).toEqual(task);
      expect(await ctx.store().tasks.findTask(ALL, task.id)).toEqual(task);
    });

    it("answers null for a task that does not exist", async () => {
      const missing = buildTask();
      expect(await ctx.store().tasks.findTask(ALL, missing.id)).toBeNull();
    });

    it("hides a deleted task from findTask and listTasks", async () => {
      const [kept, deleted] = await insertTasks(ctx.store(), {}, {});
      await remove(ctx.store(), deleted!.id, minute(0, 10));
      expect(await ctx.store().tasks.findTask(ALL, deleted!.id)).toBeNull();
      expect(await ctx.store().tasks.findTask(ALICE_SCOPE, deleted!.id)).toBeNull();
      const listed = await listAll(ctx, { limit: 10 });
      expect(listed.map((task) => task.id)).toEqual([kept!.id]);
    });

    it("lists only the scope's tasks, and every owner's for the all scope", async () => {
      const [a1, b1, a2] = await insertTasks(
        ctx.store(),
        { owner: ALICE },
        { owner: BOB },
        { owner: ALICE },
      );
      const ids = (tasks: Task[]) => tasks.map((task) => task.id);
      expect(ids(await listAll(ctx, { limit: 10 }, ALICE_SCOPE))).toEqual([a1!.id, a2!.id]);
      expect(ids(await listAll(ctx, { limit: 10 }, BOB_SCOPE))).toEqual([b1!.id]);
      expect(ids(await listAll(ctx, { limit: 10 }, ALL))).toEqual([a1!.id, b1!.id, a2!.id]);
    });

    it("filters the listing by status", async () => {
      const [enabled, paused] = await insertTasks(ctx.store(), {}, {});
      await pause(ctx.store(), paused!.id, minute(0, 10));
      const ids = async (status: Task["status"]) =>
        (await listAll(ctx, { limit: 10, status })).map((task) => task.id);
      expect(await ids("enabled")).toEqual([enabled!.id]);
      expect(await ids("paused")).toEqual([paused!.id]);
      expect(await ids("completed")).toEqual([]);
    });

    it("filters the listing by target kind", async () => {
      const [agent, webhook, handler] = await insertTasks(
        ctx.store(),
        { target: agentTarget() },
        { target: webhookTarget() },
        { target: handlerTarget("report") },
      );
      const ids = async (targetKind: Task["target"]["kind"]) =>
        (await listAll(ctx, { limit: 10, targetKind })).map((task) => task.id);
      expect(await ids("agent")).toEqual([agent!.id]);
      expect(await ids("webhook")).toEqual([webhook!.id]);
      expect(await ids("handler")).toEqual([handler!.id]);
    });

    it("filters the listing by bound thread, and by thread scope when given", async () => {
      const [onMain, onOther, onWebhook] = await insertTasks(
        ctx.store(),
        { target: agentTarget("main"), context: reuseThread("t-1") },
        { target: agentTarget("other"), context: reuseThread("t-1") },
        { target: webhookTarget(), context: reuseThread("t-1") },
        { target: agentTarget("main"), context: reuseThread("t-2") },
        { target: agentTarget("main") },
        { owner: BOB, target: agentTarget("main"), context: reuseThread("t-1") },
      );
      const thread = reuseThread("t-1");
      if (thread.mode !== "reuse_thread") throw new Error("unreachable");
      const ids = async (query: { threadScope?: string }) =>
        (
          await listAll(
            ctx,
            { limit: 10, thread: { ...query, threadId: thread.threadId } },
            ALICE_SCOPE,
          )
        ).map((task) => task.id);
      expect(await ids({})).toEqual([onMain!.id, onOther!.id, onWebhook!.id]);
      expect(await ids({ threadScope: "agent:main" })).toEqual([onMain!.id]);
      expect(await ids({ threadScope: `webhook:${ALICE}` })).toEqual([onWebhook!.id]);
      expect(await ids({ threadScope: "webhook" })).toEqual([]);
    });

    it("pages through every task exactly once in creation order", async () => {
      const tasks = await insertTasks(
        ctx.store(),
        { createdAt: at(3) },
        { createdAt: at(1) },
        { createdAt: at(2) },
        { createdAt: at(2) },
        { createdAt: at(5) },
        { createdAt: at(4) },
        { createdAt: at(1) },
      );
      const expected = [...tasks]
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
        .map((task) => task.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await ctx.store().tasks.listTasks(ALICE_SCOPE, {
          limit: 3,
          ...(cursor === undefined ? {} : { cursor }),
        });
        seen.push(...page.items.map((task) => task.id));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor !== undefined);
      expect(seen).toEqual(expected);
      expect(pages).toBe(3);
    });

    it("pages newest first when asked, each task once, filters held", async () => {
      const tasks = await insertTasks(
        ctx.store(),
        { createdAt: at(3) },
        { createdAt: at(1) },
        { createdAt: at(2) },
        { createdAt: at(2) },
        { createdAt: at(5) },
        { createdAt: at(4) },
        { createdAt: at(1) },
      );
      await pause(ctx.store(), tasks[4]!.id, minute(0, 10));
      const newest = (list: typeof tasks) =>
        [...list]
          .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
          .map((task) => task.id);
      const read = async (query: { status?: "enabled" }) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await ctx.store().tasks.listTasks(ALICE_SCOPE, {
            ...query,
            newestFirst: true,
            limit: 3,
            ...(cursor === undefined ? {} : { cursor }),
          });
          seen.push(...page.items.map((task) => task.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined);
        return seen;
      };
      expect(await read({})).toEqual(newest(tasks));
      expect(await read({ status: "enabled" })).toEqual(
        newest(tasks.filter((task) => task.id !== tasks[4]!.id)),
      );
    });

    it("gives no cursor when a page ends with the last task", async () => {
      await insertTasks(ctx.store(), {}, {});
      const page = await ctx.store().tasks.listTasks(ALL, { limit: 2 });
      expect(page.items).toHaveLength(2);
      expect(page.nextCursor).toBeNull();
    });

    it("keeps pages stable when tasks are inserted between page reads", async () => {
      const original = await insertTasks(ctx.store(), {}, {}, {}, {}, {});
      const seen: string[] = [];
      const first = await ctx.store().tasks.listTasks(ALICE_SCOPE, { limit: 2 });
      seen.push(...first.items.map((task) => task.id));
      const later = await insertTasks(
        ctx.store(),
        { createdAt: minute(1) },
        { createdAt: minute(2) },
        { createdAt: at(-1) },
      );
      let cursor = first.nextCursor ?? undefined;
      while (cursor !== undefined) {
        const page = await ctx.store().tasks.listTasks(ALICE_SCOPE, { limit: 2, cursor });
        seen.push(...page.items.map((task) => task.id));
        cursor = page.nextCursor ?? undefined;
        if (page.items.length === 0) break;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const task of original) expect(seen.filter((id) => id === task.id)).toHaveLength(1);
      // Tasks created after the cursor's position are reached; one sorting before it is not.
      expect(seen).toContain(later[0]!.id);
      expect(seen).toContain(later[1]!.id);
      expect(seen).not.toContain(later[2]!.id);
    });

    it("refuses a cursor it did not make", async () => {
      await insertTasks(ctx.store(), {}, {});
      await expect(
        ctx.store().tasks.listTasks(ALL, { limit: 1, cursor: "not-a-cursor" }),
      ).rejects.toMatchObject({ code: "validation_failed" });
    });
  });
}
