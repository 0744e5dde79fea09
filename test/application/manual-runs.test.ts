/**
 * Manual runs' races and options through the service over the memory store (issue 36): a trigger that
 * loses its idempotency key's race to a concurrent one answers with the winner and supersedes nothing,
 * a winner gone before it is read is not_found, and a trigger that takes a once task's occurrence
 * stands for its nominal time. The races are forced: the concurrent request runs, through the same
 * service, right after the trigger's first read of its key.
 */
import { describe, expect, it } from "vitest";
import type { RunView } from "../../src/application/shapes/view-mappers.js";
import type { TaskId } from "../../src/domain/ids.js";
import {
  ALICE,
  createTask,
  cronInput,
  harness,
  history,
  iso,
  minute,
  onceInput,
  reload,
} from "./harness.js";
import type { Harness } from "./harness.js";

/** Runs `concurrent` once, right after the next read of a manual run's key (which it does not see). */
function afterFirstKeyRead(h: Harness, concurrent: () => Promise<void>): void {
  const runs = h.store.runs;
  const find = runs.findManualRun.bind(runs);
  let raced = false;
  runs.findManualRun = async (taskId: TaskId, key: string) => {
    const found = await find(taskId, key);
    if (!raced) {
      raced = true;
      await concurrent();
    }
    return found;
  };
}

describe("triggerRun", () => {
  it("answers a trigger that lost its key's race with the winner's run, superseding nothing", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("0 0 1 1 *", { options: { overlap: "cancel_other" } }),
    );
    let winner: RunView | undefined;
    afterFirstKeyRead(h, async () => {
      winner = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "same" }, minute(1));
    });
    const answer = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "same" }, minute(1, 1));
    expect(answer).toEqual(winner);
    const runs = await history(h, ALICE, task.id);
    expect(runs.map((r) => [r.id, r.status])).toEqual([[winner!.id, "queued"]]);
    // A trigger with a new key does supersede it, and the task records that verdict.
    await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "next" }, minute(2));
    expect((await history(h, ALICE, task.id)).find((r) => r.id === winner!.id)).toMatchObject({
      status: "cancelled",
      reason: "superseded",
    });
    expect((await reload(h, task.id)).last_error).toBe("cancelled before it started (superseded)");
  });

  it("answers not_found when the winner of its key's race is gone before it is read", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 0 1 1 *", { options: { overlap: "allow_all" } }));
    const runs = h.store.runs;
    const find = runs.findManualRun.bind(runs);
    let reads = 0;
    runs.findManualRun = async (taskId: TaskId, key: string) => {
      reads++;
      if (reads === 1) {
        const found = await find(taskId, key);
        await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "same" }, minute(1));
        return found;
      }
      if (reads === 3) {
        // The lost trigger reads the winner again: its task was deleted and its runs purged meanwhile.
        await h.tasks.delete(ALICE, task.id, { force: true }, minute(2));
        await runs.purge(minute(60 * 24 * 365), 10);
      }
      return find(taskId, key);
    };
    await expect(
      h.tasks.trigger(ALICE, task.id, { idempotencyKey: "same" }, minute(1, 1)),
    ).rejects.toMatchObject({ code: "not_found", resource: "run" });
  });

  it("stands for a once task's occurrence when it takes it, and for now otherwise", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(30), { options: { overlap: "allow_all" } }));
    const plain = await h.tasks.trigger(ALICE, task.id, {}, minute(1));
    expect(plain).toMatchObject({ trigger: "manual", scheduled_for: iso(minute(1)) });
    const taking = await h.tasks.trigger(ALICE, task.id, { takeOccurrence: true }, minute(2));
    expect(taking).toMatchObject({ trigger: "manual", scheduled_for: iso(minute(30)) });
  });
});
