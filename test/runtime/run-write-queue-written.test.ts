/**
 * `RunWriteQueue.written`: what an admission round waits for before it admits (docs/decisions.md#an-admission-round-waits-for-its-verdicts-writes-at-most-50-ms):
 * the writes queued so far, not those queued after it asked.
 */
import { describe, expect, it } from "vitest";
import type { RunWrite } from "../../src/application/dispatch/run-writes.js";
import type { RunId } from "../../src/domain/ids.js";
import type { RunChangeResult } from "../../src/domain/ports/run-repository.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { RunWriteQueue } from "../../src/runtime/run-write-queue.js";

const completion = (id: string): RunWrite => ({
  kind: "completion",
  runId: id as RunId,
  verdict: { status: "succeeded" },
});

/** A queue whose store answers each batch only when the test releases it. */
function heldQueue() {
  const releases: (() => void)[] = [];
  const queue = new RunWriteQueue({
    clock: new VirtualClock(Date.parse("2026-01-05T00:00:00Z")),
    maxBatch: 50,
    giveUp: new AbortController().signal,
    write: (writes) =>
      new Promise<readonly RunChangeResult[]>((resolve) => {
        releases.push(() => {
          resolve(writes.map((): RunChangeResult => ({ kind: "changed", change: {} as never })));
        });
      }),
    onFailure: () => undefined,
    onSuccess: () => undefined,
  });
  return { queue, releases };
}

describe("RunWriteQueue.written", () => {
  it("is null when nothing is queued or being written", async () => {
    const { queue, releases } = heldQueue();
    expect(queue.written()).toBeNull();
    void queue.enqueue(completion("a"), null);
    await flushPromises();
    releases.shift()?.();
    await flushPromises();
    expect(queue.written()).toBeNull();
  });

  it("settles once the writes queued before it are written, not waiting for those queued after", async () => {
    const { queue, releases } = heldQueue();
    void queue.enqueue(completion("a"), null);
    void queue.enqueue(completion("b"), null);
    let settled = false;
    void queue.written()?.then(() => {
      settled = true;
    });
    await flushPromises();
    // The first batch (a, b) is being written; c queued meanwhile forms the next one.
    void queue.enqueue(completion("c"), null);
    await flushPromises();
    expect(settled).toBe(false);
    releases.shift()?.();
    await flushPromises();
    expect(settled).toBe(true);
    expect(releases).toHaveLength(1);
    expect(queue.written()).not.toBeNull();
  });
});
