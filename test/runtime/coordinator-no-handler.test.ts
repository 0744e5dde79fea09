/**
 * Handler runs nobody serves (docs/semantics.md#handler-runs-nobody-serves): each replica registers its
 * handler names with its heartbeat, and a queued handler run whose name no live replica registered ends
 * `failed` (no_handler) once due for the liveness timeout, instead of waiting for its queue timeout.
 */
import { describe, expect, it } from "vitest";
import type { Instant } from "../../src/domain/time.js";
import { SECOND, createHarness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);

/** Replica `api` accepts "job" tasks; replica `other` serves only "other". One store, one clock. */
async function queuedJobRun() {
  const other = createHarness({
    start: T0,
    replicaId: "other",
    servedHandlers: new Set(["other"]),
  });
  const api = createHarness({ store: other.store, clock: other.clock, replicaId: "api" });
  const task = await api.create({ schedule: { type: "once", run_at: "2026-01-05T00:00:01Z" } });
  return { other, task };
}

describe("handler runs no live replica serves", () => {
  it("end failed with reason no_handler once due for the liveness timeout", async () => {
    const { other, task } = await queuedJobRun();
    await other.at(t0 + 2 * SECOND);
    const [run] = await other.runs(task.id);
    expect(run).toMatchObject({ status: "queued" });
    // Due at 00:00:01; the liveness timeout is 10 s: still waiting at 00:00:11.
    await other.at(t0 + 11 * SECOND);
    expect(await other.run(run!.id)).toMatchObject({ status: "queued" });
    await other.at(t0 + 11 * SECOND + 1);
    const failed = await other.run(run!.id);
    expect(failed).toMatchObject({ status: "failed", reason: "no_handler", claimedBy: null });
    expect(failed.error).toMatch(/no live replica serves the handler "job"/);
    expect((await other.task(task.id)).status).toBe("failed");
  });

  it("stay queued while a live replica registered the handler, busy or not", async () => {
    const { other, task } = await queuedJobRun();
    for (let s = 2; s <= 40; s += 2) {
      await other.store.replicas.heartbeat("worker", (t0 + s * SECOND) as Instant, ["job"]);
      await other.at(t0 + s * SECOND);
    }
    const [run] = await other.runs(task.id);
    expect(run).toMatchObject({ status: "queued" });
  });

  it("stay queued while a live replica registered no names (a version before registration)", async () => {
    const { other, task } = await queuedJobRun();
    await other.store.replicas.heartbeat("legacy", (t0 + 30 * SECOND) as Instant);
    await other.at(t0 + 30 * SECOND);
    const [run] = await other.runs(task.id);
    expect(run).toMatchObject({ status: "queued" });
  });

  it("registers the coordinator's own handler names with its heartbeat", async () => {
    const { other } = await queuedJobRun();
    await other.at(t0 + SECOND);
    const replicas = await other.store.replicas.listReplicas(t0 as Instant, 10);
    expect(replicas).toEqual([expect.objectContaining({ id: "other", handlerNames: ["other"] })]);
  });
});
