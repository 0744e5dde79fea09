/**
 * Two small use cases judged by what they answer (issue 36 item 7): why a replica is not ready
 * (docs/operations.md#metrics-and-probes), and redrive (docs/semantics.md#redrive) through the service
 * over the memory store: an ended run back in the queue as its next attempt, refused by name otherwise.
 */
import { describe, expect, it } from "vitest";
import { notReadyReason } from "../../src/application/dispatch/readiness.js";
import type { ReadinessStore } from "../../src/application/dispatch/readiness.js";
import type { MigrationStatus } from "../../src/domain/ports/store.js";
import {
  ALICE,
  BOB,
  claim,
  claimAndLaunch,
  createTask,
  cronInput,
  harness,
  history,
  launch,
  minute,
  onceInput,
  reload,
  reloadRun,
  SECOND,
} from "./harness.js";

function store(
  ping: () => Promise<void>,
  status: Partial<MigrationStatus>,
): ReadinessStore & {
  pings: number;
} {
  const fake = {
    pings: 0,
    async ping() {
      fake.pings++;
      await ping();
    },
    migrationStatus: () =>
      Promise.resolve({ current: true, pending: [], ...status } as unknown as MigrationStatus),
  };
  return fake;
}

describe("notReadyReason", () => {
  const up = () => Promise.resolve();

  it("is ready when started, not stopping, the database answers and migrations are current", async () => {
    expect(await notReadyReason(store(up, {}), { started: true, stopping: false })).toBeNull();
  });

  it("says shutting down first, then starting, without asking the database", async () => {
    const s = store(up, {});
    expect(await notReadyReason(s, { started: true, stopping: true })).toBe("shutting down");
    expect(await notReadyReason(s, { started: false, stopping: true })).toBe("shutting down");
    expect(await notReadyReason(s, { started: false, stopping: false })).toBe("starting");
    expect(s.pings).toBe(0);
  });

  it("names the database's error when it does not answer", async () => {
    const down = store(() => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432")), {});
    expect(await notReadyReason(down, { started: true, stopping: false })).toBe(
      "the database is unreachable: connect ECONNREFUSED 127.0.0.1:5432",
    );
    // A driver may reject with a bare string: the reason is still named.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    const odd = store(() => Promise.reject("socket closed"), {});
    expect(await notReadyReason(odd, { started: true, stopping: false })).toBe(
      "the database is unreachable: socket closed",
    );
  });

  it("names the pending migrations, or none", async () => {
    const pending = store(up, { current: false, pending: [19, 20] });
    expect(await notReadyReason(pending, { started: true, stopping: false })).toBe(
      "migrations are not current (pending: 19, 20)",
    );
    const ahead = store(up, { current: false, pending: [] });
    expect(await notReadyReason(ahead, { started: true, stopping: false })).toBe(
      "migrations are not current (pending: none)",
    );
  });
});

describe("redriveRun", () => {
  /** A once task whose only launch certainly failed: its run ended `failed`. */
  async function failedRun() {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    await h.dispatch.admission.admitDue(minute(5), 10);
    h.launcher.answer({ kind: "failed" });
    const [claimed] = await claim(h, minute(5));
    const change = await launch(h, claimed!, minute(5, SECOND));
    expect(change!.run.status).toBe("failed");
    return { h, task, run: change!.run };
  }

  it("puts a failed run back in the queue as its next attempt, and wakes the dispatcher", async () => {
    const { h, run } = await failedRun();
    const wakes = h.signals.wakes;
    const redriven = await h.tasks.redriveRun(ALICE, run.id, minute(6));
    // `attempt` counts claims: the redriven run's next claim makes it attempt + 1; `failures` keeps.
    expect(redriven).toMatchObject({
      id: run.id,
      status: "queued",
      attempt: run.attempt,
      failures: 1,
    });
    expect(await reloadRun(h, run.id)).toMatchObject({ status: "queued" });
    expect(h.signals.wakes).toBeGreaterThan(wakes);
    // And it launches again.
    const launched = await claimAndLaunch(h, minute(6, SECOND));
    expect(launched.map((r) => [r.id, r.status, r.attempt])).toEqual([
      [run.id, "running", run.attempt + 1],
    ]);
  });

  it("answers not_found for a missing run and for another owner's", async () => {
    const { h, run } = await failedRun();
    await expect(h.tasks.redriveRun(ALICE, "no-such-run", minute(6))).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(h.tasks.redriveRun(BOB, run.id, minute(6))).rejects.toMatchObject({
      code: "not_found",
    });
    expect(await reloadRun(h, run.id)).toMatchObject({ status: "failed" });
  });

  it("refuses a run that has not ended, saying why", async () => {
    const { h, run } = await failedRun();
    await h.tasks.redriveRun(ALICE, run.id, minute(6));
    const refused: unknown = await h.tasks
      .redriveRun(ALICE, run.id, minute(7))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "illegal_transition" });
    expect((refused as Error).message).toContain(`run ${run.id} is queued`);
  });

  it("refuses a run whose task was deleted: it stays ended", async () => {
    const { h, task, run } = await failedRun();
    await h.tasks.delete(ALICE, task.id, {}, minute(6));
    await expect(h.tasks.redriveRun(ALICE, run.id, minute(7))).rejects.toMatchObject({
      code: "illegal_transition",
      message: `run ${run.id} is failed: its task was deleted`,
    });
  });

  it("supersedes the task's queued run under cancel_other, and records its verdict on the task", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("* * * * *", { options: { overlap: "cancel_other" } }),
    );
    await h.dispatch.admission.admitDue(minute(1), 10);
    h.launcher.answer({ kind: "failed" });
    const [claimed] = await claim(h, minute(1));
    const failed = (await launch(h, claimed!, minute(1, SECOND)))!.run;
    expect(failed.status).toBe("failed");
    await h.dispatch.admission.admitDue(minute(2), 10);
    const [waiting] = (await history(h, ALICE, task.id)).filter((r) => r.status === "queued");
    await h.tasks.redriveRun(ALICE, failed.id, minute(2, SECOND));
    expect(await reloadRun(h, waiting!.id)).toMatchObject({
      status: "cancelled",
      reason: "superseded",
    });
    expect((await reload(h, task.id)).last_error).toBe("cancelled before it started (superseded)");
  });

  it("answers not_found for a run purged between its read and its task's lock", async () => {
    const { h, run } = await failedRun();
    const runs = h.store.runs;
    const findRun = runs.findRun.bind(runs);
    // The purge lands right after the service read the run, before it locks the task.
    runs.findRun = async (...args) => {
      const found = await findRun(...args);
      expect(await runs.purge(minute(60 * 24 * 365), 10)).toBe(1);
      return found;
    };
    await expect(h.tasks.redriveRun(ALICE, run.id, minute(6))).rejects.toMatchObject({
      code: "not_found",
      resource: "run",
    });
  });
});
