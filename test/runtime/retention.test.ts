/**
 * Retention off the pass (docs/operations.md#retention): a round deletes a backlog batch after batch, at
 * most PURGE_BATCHES_PER_ROUND batches, one round at a time, and ends early when the replica stops. The
 * store's side is a ledger of finished runs with their finish instants (the store contract checks the
 * real statements: test/contract/cases/sweeps.ts).
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/application/events/logger.js";
import type { Logger } from "../../src/application/events/logger.js";
import type { DurationMs, Instant } from "../../src/domain/time.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { PURGE_BATCH, PURGE_BATCHES_PER_ROUND, Retention } from "../../src/runtime/retention.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");
const HOUR = 3_600_000;

/** Finished runs by finish instant; `purge` deletes the oldest `limit` finished before `before`. */
class FinishedRuns {
  finishedAt: number[] = [];
  statements = 0;
  gate: Promise<void> | null = null;

  purge = async (now: Instant, retentionMs: DurationMs, limit: number): Promise<number> => {
    this.statements += 1;
    if (this.gate !== null) await this.gate;
    const before = now - retentionMs;
    this.finishedAt.sort((a, b) => a - b);
    let n = 0;
    while (n < limit && n < this.finishedAt.length && (this.finishedAt[n] ?? 0) < before) n++;
    this.finishedAt.splice(0, n);
    return n;
  };
}

function logLines(): { log: Logger; lines: { fields: object; msg: string }[] } {
  const lines: { fields: object; msg: string }[] = [];
  const log: Logger = {
    ...silentLogger,
    info: (fields: object, msg: string) => {
      lines.push({ fields, msg });
    },
  };
  return { log, lines };
}

describe("Retention", () => {
  it("deletes a backlog in batches and keeps runs within the retention", async () => {
    const runs = new FinishedRuns();
    // 2.5 batches of runs finished two hours ago, 10 finished a minute ago.
    const old = Math.floor(PURGE_BATCH * 2.5);
    runs.finishedAt = [
      ...Array.from({ length: old }, (_, i) => t0 - 2 * HOUR + i),
      ...Array.from({ length: 10 }, (_, i) => t0 - 60_000 + i),
    ];
    const { log, lines } = logLines();
    const retention = new Retention({
      recovery: runs,
      clock: new VirtualClock(t0),
      retentionMs: HOUR as DurationMs,
      log,
      stopping: () => false,
    });
    expect(await retention.start()).toBe(old);
    expect(runs.finishedAt).toHaveLength(10);
    expect(runs.statements).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual(["retention deleted a backlog of finished runs"]);
    expect(lines[0]?.fields).toMatchObject({ purged: old, batches: 3, more: false });
    // Nothing left to delete: one statement, no line.
    expect(await retention.start()).toBe(0);
    expect(runs.statements).toBe(4);
    expect(lines).toHaveLength(1);
  });

  it("stops a round after PURGE_BATCHES_PER_ROUND batches and says more is left", async () => {
    const runs = new FinishedRuns();
    const total = PURGE_BATCH * (PURGE_BATCHES_PER_ROUND + 1);
    runs.finishedAt = Array.from({ length: total }, (_, i) => t0 - 2 * HOUR + i);
    const { log, lines } = logLines();
    const retention = new Retention({
      recovery: runs,
      clock: new VirtualClock(t0),
      retentionMs: HOUR as DurationMs,
      log,
      stopping: () => false,
    });
    expect(await retention.start()).toBe(PURGE_BATCH * PURGE_BATCHES_PER_ROUND);
    expect(runs.finishedAt).toHaveLength(PURGE_BATCH);
    expect(lines[0]?.fields).toMatchObject({ more: true });
    expect(await retention.start()).toBe(PURGE_BATCH);
    expect(runs.finishedAt).toHaveLength(0);
  });

  it("runs one round at a time, and a stopping replica ends its round after the current batch", async () => {
    const runs = new FinishedRuns();
    runs.finishedAt = Array.from({ length: PURGE_BATCH * 10 }, (_, i) => t0 - 2 * HOUR + i);
    let release: () => void = () => undefined;
    runs.gate = new Promise((resolve) => {
      release = resolve;
    });
    let stopping = false;
    const retention = new Retention({
      recovery: runs,
      clock: new VirtualClock(t0),
      retentionMs: HOUR as DurationMs,
      log: silentLogger,
      stopping: () => stopping,
    });
    const round = retention.start();
    expect(round).not.toBeNull();
    expect(retention.running).toBe(true);
    // A second sweep while the first round deletes: no second round.
    expect(retention.start()).toBeNull();
    stopping = true;
    release();
    expect(await round).toBe(PURGE_BATCH);
    expect(runs.statements).toBe(1);
    expect(retention.running).toBe(false);
  });

  it("lets a failed round go, so that the next sweep starts another", async () => {
    let calls = 0;
    const retention = new Retention({
      recovery: {
        purge: () => {
          calls += 1;
          return calls === 1
            ? Promise.reject(new Error("database unavailable"))
            : Promise.resolve(0);
        },
      },
      clock: new VirtualClock(t0),
      retentionMs: HOUR as DurationMs,
      log: silentLogger,
      stopping: () => false,
    });
    await expect(retention.start()).rejects.toThrow("database unavailable");
    expect(retention.running).toBe(false);
    expect(await retention.start()).toBe(0);
  });
});
