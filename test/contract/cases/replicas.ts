/**
 * Contract: the replicas' heartbeat rows register the handler names each serves
 * (docs/deploy.md#handler-names), read back for the live ones, and the no-handler sweep finds the queued
 * handler runs no name covers (docs/semantics.md#handler-runs-nobody-serves), which end `no_handler`.
 */
import { describe, expect, it } from "vitest";
import { failUnservedRun } from "../../../src/domain/run-recovery.js";
import { ALL, MINUTE, at, handlerTarget, minute, onceAt } from "../fixtures.js";
import { changeOne, claimDue, insertTask, reload, reloadRun, triggerRun } from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

export function describeReplicas(ctx: ContractContext): void {
  describe("replicas", () => {
    it("registers each replica's handler names with its heartbeat and lists the live ones, latest first", async () => {
      const replicas = ctx.store().replicas;
      await replicas.heartbeat("a", minute(1), ["report", "send"]);
      await replicas.heartbeat("b", minute(2), []);
      await replicas.heartbeat("old", minute(0), ["gone"]);
      await replicas.heartbeat("legacy", minute(1, 500));
      expect(await replicas.listReplicas(minute(1), 10)).toEqual([
        { id: "b", startedAt: minute(2), heartbeatAt: minute(2), handlerNames: [] },
        {
          id: "legacy",
          startedAt: minute(1, 500),
          heartbeatAt: minute(1, 500),
          handlerNames: null,
        },
        { id: "a", startedAt: minute(1), heartbeatAt: minute(1), handlerNames: ["report", "send"] },
      ]);
      // A later beat replaces the names and keeps the start.
      await replicas.heartbeat("a", minute(3), ["report"]);
      expect(await replicas.listReplicas(minute(3), 10)).toEqual([
        { id: "a", startedAt: minute(1), heartbeatAt: minute(3), handlerNames: ["report"] },
      ]);
      expect((await replicas.listReplicas(at(0), 2)).map((r) => r.id)).toEqual(["a", "b"]);
      expect(await replicas.listReplicas(minute(4), 10)).toEqual([]);
    });

    it("finds queued handler runs due before an instant whose handler is not served, earliest first", async () => {
      const store = ctx.store();
      const report = await insertTask(store, { ...IDLE, target: handlerTarget("report") });
      const send = await insertTask(store, { ...IDLE, target: handlerTarget("send") });
      const agent = await insertTask(store, IDLE);
      const late = await triggerRun(store, ALL, report.id, "late", minute(1));
      const early = await triggerRun(store, ALL, send.id, "early", minute(0, 30));
      await triggerRun(store, ALL, report.id, "recent", minute(5));
      await triggerRun(store, ALL, agent.id, "agent", minute(0, 50));
      const claimed = await triggerRun(store, ALL, send.id, "claimed", minute(0, 20));
      await claimDue(store, minute(0, 40), { handlerNames: new Set(["send"]), limit: 1 });
      expect((await reloadRun(store, claimed!.id)).status).toBe("launching");
      const runs = store.runs;
      expect(await runs.findUnservedHandlerRuns(minute(2), [], 10)).toEqual([
        { id: early!.id, handlerName: "send" },
        { id: late!.id, handlerName: "report" },
      ]);
      expect(await runs.findUnservedHandlerRuns(minute(2), ["send"], 10)).toEqual([
        { id: late!.id, handlerName: "report" },
      ]);
      expect(await runs.findUnservedHandlerRuns(minute(2), ["send", "report"], 10)).toEqual([]);
      expect(await runs.findUnservedHandlerRuns(minute(2), [], 1)).toEqual([
        { id: early!.id, handlerName: "send" },
      ]);
      expect(await runs.findUnservedHandlerRuns(minute(0, 30), [], 10)).toEqual([]);
    });

    it("stores a queued run failed for want of a handler, with its reason", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { ...IDLE, target: handlerTarget("report") });
      const run = await triggerRun(store, ALL, task.id, "one", minute(1));
      await changeOne(store, {
        id: run!.id,
        decide: (current, owner) => failUnservedRun(current, minute(1, MINUTE), owner, "report"),
      });
      const failed = await reloadRun(store, run!.id);
      expect(failed).toMatchObject({ status: "failed", reason: "no_handler" });
      expect(failed.error).toContain('"report"');
      expect((await reload(store, task.id)).lastError).toContain('"report"');
      expect(await store.runs.findUnservedHandlerRuns(minute(10), [], 10)).toEqual([]);
    });
  });
}
