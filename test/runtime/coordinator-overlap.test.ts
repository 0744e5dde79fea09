/**
 * Overlap policies through the coordinator (docs/semantics.md#the-life-of-an-occurrence): skip, buffer_one, buffer_all, cancel_other and
 * allow_all, with the one-run-per-thread rule checked after every step.
 */
import { describe, expect, it } from "vitest";
import type { Run } from "../../src/domain/run.js";
import { MINUTE, createHarness } from "./harness.js";
import type { Harness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);

function statuses(runs: readonly Run[]): [number, string, string | null][] {
  return runs.map((r) => [(r.scheduledFor - t0) / MINUTE, r.status, r.reason]);
}

/** Ticks at minute `m` and checks that no thread holds two launching/running runs. */
async function minute(h: Harness, m: number, taskIds: readonly string[]): Promise<void> {
  await h.at(t0 + m * MINUTE);
  const holders = await h.slotHolders(taskIds);
  const threads = holders.map((r) => `${r.threadScope}/${r.threadId}`);
  expect(new Set(threads).size, `two runs on one thread at minute ${m}`).toBe(threads.length);
}

async function succeed(h: Harness, run: Run): Promise<void> {
  await h.coordinator.reportCompletion(run.id, { status: "succeeded" });
}

function every(overlap: string, context?: object) {
  return {
    schedule: { type: "interval", every: "PT1M" },
    options: { overlap },
    ...(context === undefined ? {} : { context }),
  };
}

describe("Coordinator overlap", () => {
  it("skip: records an occurrence that comes due while a run is active as skipped (overlap)", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(every("skip"));
    await minute(h, 1, [task.id]);
    await minute(h, 2, [task.id]);
    const [first] = await h.runs(task.id);
    await succeed(h, first!);
    await minute(h, 3, [task.id]);
    expect(statuses(await h.runs(task.id))).toEqual([
      [1, "succeeded", null],
      [2, "skipped", "overlap"],
      [3, "running", null],
    ]);
  });

  it("buffer_one: one run waits, later ones are coalesced, the waiting one runs next", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(every("buffer_one"));
    for (const m of [1, 2, 3, 4]) await minute(h, m, [task.id]);
    expect(statuses(await h.runs(task.id))).toEqual([
      [1, "running", null],
      [2, "queued", null],
      [3, "skipped", "coalesced"],
      [4, "skipped", "coalesced"],
    ]);
    await succeed(h, (await h.runs(task.id))[0]!);
    await h.tick();
    expect(statuses(await h.runs(task.id)).slice(0, 2)).toEqual([
      [1, "succeeded", null],
      [2, "running", null],
    ]);
    expect(h.launcher.calls.map((c) => (c.run.scheduledFor - t0) / MINUTE)).toEqual([1, 2]);
  });

  it("buffer_all: every run waits and they run one at a time, in order", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(every("buffer_all"));
    for (const m of [1, 2, 3, 4]) await minute(h, m, [task.id]);
    expect(statuses(await h.runs(task.id)).map((s) => s[1])).toEqual([
      "running",
      "queued",
      "queued",
      "queued",
    ]);
    for (let i = 0; i < 3; i++) {
      const active = (await h.runs(task.id)).find((r) => r.status === "running")!;
      await succeed(h, active);
      await h.tick();
      expect((await h.slotHolders([task.id])).length).toBe(1);
    }
    expect(h.launcher.calls.map((c) => (c.run.scheduledFor - t0) / MINUTE)).toEqual([1, 2, 3, 4]);
  });

  for (const context of [undefined, { mode: "reuse_thread", thread_id: "thread-1" }]) {
    const label = context === undefined ? "fresh threads" : "one reused thread";
    it(`cancel_other: asks the active run to stop; the new one waits until it has ended (${label})`, async () => {
      const h = createHarness({ start: T0 });
      const task = await h.create(every("cancel_other", context));
      await minute(h, 1, [task.id]);
      await minute(h, 2, [task.id]);
      const [first, second] = await h.runs(task.id);
      expect(first).toMatchObject({ status: "running" });
      expect(first!.cancelRequestedAt).not.toBeNull();
      expect(second).toMatchObject({ status: "queued" });
      expect(h.launcher.cancels.map((r) => r.id)).toEqual([first!.id]);
      // The old run has not confirmed yet: a third occurrence supersedes the waiting one.
      await minute(h, 3, [task.id]);
      expect(statuses(await h.runs(task.id))).toEqual([
        [1, "running", "superseded"],
        [2, "cancelled", "superseded"],
        [3, "queued", null],
      ]);
      expect(h.launcher.calls).toHaveLength(1);
      // The target confirms: the first run ends cancelled and the newest one launches.
      await h.coordinator.reportCompletion(first!.id, { status: "cancelled" });
      await h.tick();
      const runs = await h.runs(task.id);
      expect(runs[0]).toMatchObject({ status: "cancelled" });
      expect(runs[0]!.launchedAt).not.toBeNull();
      expect(runs[2]).toMatchObject({ status: "running" });
      expect(h.launcher.calls.map((c) => (c.run.scheduledFor - t0) / MINUTE)).toEqual([1, 3]);
    });
  }

  it("cancel_other: a run that never confirms is timed out, and only then the new one launches", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({
      ...every("cancel_other", { mode: "reuse_thread", thread_id: "thread-1" }),
      schedule: { type: "interval", every: "PT10M" },
      options: { overlap: "cancel_other", run_timeout: "PT15M" },
    });
    for (let m = 10; m <= 25; m++) await minute(h, m, [task.id]);
    expect((await h.runs(task.id)).map((r) => r.status)).toEqual(["running", "queued"]);
    expect(h.launcher.calls).toHaveLength(1);
    // Past its deadline (launched at 10 min, run_timeout 15 min) the sweep ends it; the thread frees and
    // the waiting run launches in the same tick.
    await minute(h, 26, [task.id]);
    const runs = await h.runs(task.id);
    expect(runs.map((r) => r.status)).toEqual(["cancelled", "running"]);
    expect(runs[0]!.finishedAt).toBe(t0 + 26 * MINUTE);
    expect(runs[1]!.launchedAt).toBe(t0 + 26 * MINUTE);
    // Told to stop when superseded, and again when timed out.
    expect(h.launcher.cancels.filter((r) => r.id === runs[0]!.id)).toHaveLength(2);
  });

  it("allow_all: runs on fresh threads overlap freely", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(every("allow_all"));
    for (const m of [1, 2, 3]) await minute(h, m, [task.id]);
    expect(statuses(await h.runs(task.id)).map((s) => s[1])).toEqual([
      "running",
      "running",
      "running",
    ]);
  });

  it("allow_all: runs on one reused thread still wait for the thread, FIFO", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(
      every("allow_all", { mode: "reuse_thread", thread_id: "thread-1" }),
    );
    for (const m of [1, 2, 3]) await minute(h, m, [task.id]);
    expect(statuses(await h.runs(task.id)).map((s) => s[1])).toEqual([
      "running",
      "queued",
      "queued",
    ]);
    await succeed(h, (await h.runs(task.id))[0]!);
    await minute(h, 3.5, [task.id]);
    expect(statuses(await h.runs(task.id)).map((s) => s[1])).toEqual([
      "succeeded",
      "running",
      "queued",
    ]);
  });
});
