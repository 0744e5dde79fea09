/**
 * The contract suite on the in-memory store, plus what only the memory store promises (frozen rows, a
 * closed store refuses work), and the domain decisions found wrong while writing the contract, each
 * shown once here through the memory store (regressions of domain bugs found while writing the suite).
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, MemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { Store } from "../../src/domain/ports/store.js";
import type { TaskId } from "../../src/domain/ids.js";
import { ALL, T0, buildTask, minute, onceAt } from "./fixtures.js";
import {
  admitDue,
  cancelOneRun,
  claimAndLaunch,
  claimDue,
  insertTask,
  ledger,
  pause,
  recordCompletion,
  recordLaunch,
  reload,
  remove,
  resume,
} from "./store-steps.js";
import { describeStoreContract, storeEnabled } from "./store-contract.js";

/** A fresh memory store whose ids come from a fixed clock: no test reads the real one. */
function openMemoryStore(): ReturnType<typeof createMemoryStore> {
  return createMemoryStore({ newId: createIdGenerator(() => T0) });
}

describeStoreContract(
  "memory",
  () => Promise.resolve(openMemoryStore()),
  (store, id, column, raw) => {
    if (!(store instanceof MemoryStore)) throw new Error("the memory contract opens memory stores");
    return store.tasks.overwriteColumn(id, column, raw);
  },
);

describe.skipIf(!storeEnabled("memory"))("memory store", () => {
  it("declares what it cannot do", () => {
    const store = openMemoryStore();
    expect(store.kind).toBe("memory");
    // The optional ports it offers (docs/architecture.md#stores).
    expect({
      wakes: "wakes" in store,
      referenceClock: "referenceClock" in store,
    }).toEqual({
      wakes: false,
      referenceClock: false,
    });
  });

  it("hands out frozen rows", async () => {
    const store = openMemoryStore();
    const task = await insertTask(store);
    const [run] = (await admitDue(store, minute(1))).queuedRuns;
    const stored = await store.tasks.findTask(ALL, task.id);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen(stored?.metadata)).toBe(true);
    expect(Object.isFrozen(stored?.schedule)).toBe(true);
    expect(Object.isFrozen(run)).toBe(true);
  });

  it("refuses every call once closed", async () => {
    const store = openMemoryStore();
    await store.close();
    await store.close();
    await expect(store.ping()).rejects.toThrow(/closed/);
    await expect(store.tasks.insertTask(buildTask())).rejects.toThrow(/closed/);
    await expect(store.runs.nextRunWakeAt()).rejects.toThrow(/closed/);
  });
});

/** A once task left `enabled` with no occurrence ahead and no active run will never finish (docs/semantics.md#task-statuses). */
async function stuckOnce(store: Store, id: TaskId): Promise<boolean> {
  const task = await reload(store, id);
  const active = (await ledger(store, id)).filter((run) =>
    ["queued", "launching", "running"].includes(run.status),
  );
  return task.status === "enabled" && task.nextRunAt === null && active.length === 0;
}

describe.skipIf(!storeEnabled("memory"))("domain decisions through the memory store", () => {
  // Was a domain bug: cancelRun (run-transitions.ts) returned no taskVerdict when it cancels a queued scheduled
  // run of a once task, so the task stays `enabled` with nothing ahead; docs/semantics.md#task-statuses says `cancelled`.
  it("ends a once task cancelled when its queued run is cancelled", async () => {
    const store = openMemoryStore();
    const task = await insertTask(store, { schedule: onceAt(minute(1)) });
    const [run] = (await admitDue(store, minute(1))).queuedRuns;
    await cancelOneRun(store, run!.id, minute(1, 10));
    expect(await stuckOnce(store, task.id)).toBe(false);
    expect((await reload(store, task.id)).status).toBe("cancelled");
  });

  // Was a domain bug: applyLaunchOutcome (run-transitions.ts), outcome `failed` on a run whose cancel was
  // requested, ends the run `cancelled` with no taskVerdict: the once task is stranded `enabled`.
  it("ends a once task cancelled when its launch fails after a cancel request", async () => {
    const store = openMemoryStore();
    const task = await insertTask(store, { schedule: onceAt(minute(1)) });
    await admitDue(store, minute(1));
    const [claimed] = await claimDue(store, minute(1, 1));
    await cancelOneRun(store, claimed!.run.id, minute(1, 2));
    await recordLaunch(store, claimed!, minute(1, 3), { kind: "failed", message: "refused" });
    expect(await stuckOnce(store, task.id)).toBe(false);
  });

  // Was a domain bug: the pause cancelled the once task's only run and left the task to resume into
  // nothing. A once task whose occurrence the pause cancelled has ended (docs/semantics.md#task-statuses): `cancelled`.
  it("ends a once task cancelled when a pause cancels its queued run, and refuses to resume it", async () => {
    const store = openMemoryStore();
    const task = await insertTask(store, { schedule: onceAt(minute(1)) });
    await admitDue(store, minute(1));
    await pause(store, task.id, minute(1, 10));
    expect((await reload(store, task.id)).status).toBe("cancelled");
    await expect(resume(store, task.id, minute(2), "all")).rejects.toMatchObject({
      code: "illegal_transition",
    });
    expect(await stuckOnce(store, task.id)).toBe(false);
  });

  // Was a domain bug: applyLaunchOutcome, outcome `busy` on a run whose cancel was requested while it was
  // launching, puts it back in the queue with `cancel_requested_at` still set; it is then claimed and
  // launched again. Nothing started, so docs/semantics.md#cancellation calls for `cancelled` at once.
  it("cancels a run asked to stop while launching when the target answers busy", async () => {
    const store = openMemoryStore();
    await insertTask(store);
    await admitDue(store, minute(1));
    const [claimed] = await claimDue(store, minute(1, 1));
    await cancelOneRun(store, claimed!.run.id, minute(1, 2));
    const change = await recordLaunch(store, claimed!, minute(1, 3), {
      kind: "busy",
      message: "thread busy",
    });
    expect(change!.run.status).toBe("cancelled");
    expect(await claimDue(store, minute(5))).toEqual([]);
  });

  // Was a domain bug: cancelRun wrote `reason` when it only requests the cancellation of a running run, and
  // completeRun keeps it when the run then succeeds: a `succeeded` run says `task_deleted` (docs/semantics.md#the-life-of-a-run:
  // `reason` says why a run is skipped, missed, failed, cancelled or timed out).
  it("leaves no failure reason on a run that succeeds after a cancel request", async () => {
    const store = openMemoryStore();
    const task = await insertTask(store);
    await admitDue(store, minute(1));
    const [launched] = await claimAndLaunch(store, minute(1, 1));
    await remove(store, task.id, minute(1, 2), true);
    const change = await recordCompletion(
      store,
      launched!.id,
      { status: "succeeded" },
      minute(1, 3),
    );
    expect(change!.run.status).toBe("succeeded");
    expect(change!.run.reason).toBeNull();
  });
});
