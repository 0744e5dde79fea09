/**
 * Measuring the clock offset against the database's (docs/operations.md#clock-skew): replicas that share a
 * clock must apply the same correction, or the one whose clock reads ahead takes every second's due work
 * (docs/operations.md#which-replica-runs-what). Readings are scripted: a slow first one (a cold pool, a
 * loaded host) whose error is tens of milliseconds, then fast ones.
 */
import { describe, expect, it } from "vitest";
import {
  OFFSET_READINGS,
  measureOffsetMs,
  offsetFromReadings,
} from "../../../../src/adapters/storage/postgres/postgres-clock-offset.js";

/** A database clock `trueOffset` ahead of the wall clock, each reading taking `trips[i]` ms, answered at `answeredAt[i]` of it. */
function scripted(trueOffset: number, trips: readonly number[], answeredAt: readonly number[]) {
  let wall = 1_000_000;
  let i = 0;
  return {
    wallNow: () => wall,
    dbNow: () => {
      const trip = trips[i] ?? 0;
      const at = answeredAt[i] ?? 0.5;
      i++;
      const db = wall + trip * at + trueOffset;
      wall += trip;
      return Promise.resolve(Math.floor(db));
    },
    taken: () => i,
  };
}

describe("the PostgreSQL clock offset", () => {
  it("keeps the fastest of several readings, not a slow first one answered late in its round trip", async () => {
    // The first reading opens the connection: 60 ms, the database read at its end.
    const clocks = scripted(0, [60, 4, 2, 6, 3], [1, 0.9, 0.5, 0.1, 0.5]);
    expect(await measureOffsetMs(clocks.dbNow, clocks.wallNow)).toBe(0);
    expect(clocks.taken()).toBe(OFFSET_READINGS);
  });

  it("gives replicas that share a clock the same correction, zero, whatever their readings' noise", async () => {
    const offsets = await Promise.all(
      [
        [0.9, 0.1, 0.7, 0.2, 0.6],
        [0.1, 0.9, 0.3, 0.8, 0.4],
        [0.5, 0.5, 0.5, 0.5, 0.5],
      ].map((answeredAt) => {
        const clocks = scripted(0, [30, 3, 2, 3, 4], answeredAt);
        return measureOffsetMs(clocks.dbNow, clocks.wallNow);
      }),
    );
    expect(offsets).toEqual([0, 0, 0]);
  });

  it("applies an offset larger than its reading's uncertainty", async () => {
    const ahead = scripted(3_600_000, [40, 2, 2, 2, 2], [1, 0.5, 0.5, 0.5, 0.5]);
    expect(await measureOffsetMs(ahead.dbNow, ahead.wallNow)).toBe(3_600_000);
    const behind = scripted(-250, [2, 2, 2, 2, 2], [0.5, 0.5, 0.5, 0.5, 0.5]);
    expect(await measureOffsetMs(behind.dbNow, behind.wallNow)).toBe(-250);
    // 5 ms off over a 2 ms round trip is beyond its 2 ms uncertainty.
    expect(offsetFromReadings([{ before: 0, db: 6, after: 2 }])).toBe(5);
  });

  it("takes an offset within half the round trip plus a millisecond as none", () => {
    expect(offsetFromReadings([{ before: 0, db: 3, after: 4 }])).toBe(0);
    expect(offsetFromReadings([{ before: 0, db: -1, after: 4 }])).toBe(0);
    expect(offsetFromReadings([{ before: 0, db: 6, after: 4 }])).toBe(4);
    expect(() => offsetFromReadings([])).toThrow(RangeError);
  });
});
