/**
 * RecoverySweeps' edges (docs/semantics.md#handler-runs-nobody-serves, docs/operations.md#replica-liveness-what-silent-means):
 * the no-handler sweep fails a queued handler run only when it can tell which handlers the live fleet
 * serves (a registry, fewer than 1,000 live replicas, each with its names registered), and the orphan
 * sweep pages through every running handler run, ending only those claimed under this replica's id
 * that this process is not running. On the memory store, time from the test.
 */
import { describe, expect, it } from "vitest";
import { RecoverySweeps } from "../../src/application/dispatch/recovery-sweeps.js";
import type { RunId } from "../../src/domain/ids.js";
import type { Instant } from "../../src/domain/time.js";
import {
  claim,
  createTask,
  harness,
  launch,
  minute,
  onceInput,
  REPLICA,
  reloadRun,
} from "./harness.js";
import type { Harness } from "./harness.js";

/** A queued handler run due at minute 1, for the handler `log`. */
async function queuedHandlerRun(h: Harness): Promise<RunId> {
  await createTask(h, onceInput(minute(1), { target: { kind: "handler", name: "log" } }));
  const [queued] = (await h.dispatch.admission.admitDue(minute(1), 10)).queuedRuns;
  return queued!.id;
}

/** Long after the run came due: past the liveness timeout by far. */
const LATER: Instant = minute(30);

describe("RecoverySweeps.sweepUnservedHandlerRuns", () => {
  it("fails a queued run whose handler no live replica registered", async () => {
    const h = harness();
    const id = await queuedHandlerRun(h);
    await h.store.replicas.heartbeat("other", LATER, ["report"]);
    const swept = await h.dispatch.recovery.sweepUnservedHandlerRuns(LATER, [], 10);
    expect(swept.map((s) => s.change.run.id)).toEqual([id]);
    expect(await reloadRun(h, id)).toMatchObject({ status: "failed", reason: "no_handler" });
  });

  it("fails nothing while this replica serves the handler", async () => {
    const h = harness();
    const id = await queuedHandlerRun(h);
    await h.store.replicas.heartbeat("other", LATER, ["report"]);
    expect(await h.dispatch.recovery.sweepUnservedHandlerRuns(LATER, ["log"], 10)).toEqual([]);
    expect(await reloadRun(h, id)).toMatchObject({ status: "queued" });
  });

  it("fails nothing without a registry to tell which handlers are served", async () => {
    const h = harness();
    const id = await queuedHandlerRun(h);
    const blind = new RecoverySweeps({ runs: h.store.runs, budget: { policy: h.policy } });
    expect(await blind.sweepUnservedHandlerRuns(LATER, [], 10)).toEqual([]);
    expect(await reloadRun(h, id)).toMatchObject({ status: "queued" });
  });

  it("fails nothing while a live replica registered no names (it may serve any)", async () => {
    const h = harness();
    const id = await queuedHandlerRun(h);
    await h.store.replicas.heartbeat("named", LATER, ["report"]);
    await h.store.replicas.heartbeat("unnamed", LATER);
    expect(await h.dispatch.recovery.sweepUnservedHandlerRuns(LATER, [], 10)).toEqual([]);
    expect(await reloadRun(h, id)).toMatchObject({ status: "queued" });
  });

  it("fails nothing when the live fleet is too large to read whole", async () => {
    const h = harness();
    const id = await queuedHandlerRun(h);
    for (let i = 0; i < 1_000; i += 1) {
      await h.store.replicas.heartbeat(`r${String(i)}`, LATER, ["report"]);
    }
    expect(await h.dispatch.recovery.sweepUnservedHandlerRuns(LATER, [], 10)).toEqual([]);
    expect(await reloadRun(h, id)).toMatchObject({ status: "queued" });
  });
});

describe("RecoverySweeps.sweepOrphanedHandlerRuns", () => {
  it("pages through every running handler run and ends only this id's runs not running here", async () => {
    const h = harness();
    for (let i = 0; i < 5; i += 1) {
      await createTask(h, onceInput(minute(1), { target: { kind: "handler", name: "log" } }));
    }
    await h.dispatch.admission.admitDue(minute(1), 10);
    const mine = await claim(h, minute(1), { limit: 3 });
    const theirs = await claim(h, minute(1), { limit: 10, replicaId: "replica-b" });
    expect(mine).toHaveLength(3);
    expect(theirs).toHaveLength(2);
    for (const claimed of [...mine, ...theirs]) await launch(h, claimed, minute(1));
    const here = mine[0]!.run.id;
    // A page of 1 run: the sweep must read all five pages to find the two orphans.
    const swept = await h.dispatch.recovery.sweepOrphanedHandlerRuns(
      REPLICA,
      (runId) => runId === here,
      minute(2),
      1,
    );
    const orphans = mine.slice(1).map((c) => c.run.id);
    expect(swept.map((s) => s.change.run.id).sort()).toEqual([...orphans].sort());
    for (const id of orphans) {
      expect(await reloadRun(h, id)).toMatchObject({ status: "failed", reason: "replica_lost" });
    }
    expect(await reloadRun(h, here)).toMatchObject({ status: "running" });
    for (const claimed of theirs) {
      expect(await reloadRun(h, claimed.run.id)).toMatchObject({ status: "running" });
    }
  });
});

describe("RecoverySweeps.expiredClaims", () => {
  it("judges only expired claims when this replica cannot tell silence", async () => {
    const h = harness();
    await createTask(h, onceInput(minute(1), { target: { kind: "handler", name: "log" } }));
    await h.dispatch.admission.admitDue(minute(1), 10);
    await h.store.replicas.heartbeat("silent", minute(1));
    const [claimed] = await claim(h, minute(1), { replicaId: "silent" });
    // Its replica silent past the liveness timeout, its claim's lease not yet expired.
    const soon = minute(1, h.policy.livenessMs + 1);
    expect(soon).toBeLessThan(claimed!.run.claimExpiresAt!);
    expect((await h.dispatch.recovery.expiredClaims(soon, 10)).map((c) => c.run.id)).toEqual([
      claimed!.run.id,
    ]);
    expect(await h.dispatch.recovery.expiredClaims(soon, 10, false)).toEqual([]);
  });
});
