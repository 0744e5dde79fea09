/**
 * Measuring this machine's clock against the database's (docs/operations.md#clock-skew). One reading is
 * `db - (before + after) / 2`, wrong by up to half its round trip, and on a loaded host a round trip takes
 * tens of milliseconds (the first one on a cold pool also opens the connection). Replicas that share a
 * clock would each keep their own error for 10 minutes, and the one whose clock then reads furthest ahead
 * wakes first every second and admits and claims everything due, leaving the others idle
 * (docs/operations.md#which-replica-runs-what). So several readings are taken, the one with the shortest
 * round trip is kept, and an offset within that reading's uncertainty is taken as none: replicas whose
 * clocks already agree with the database's apply exactly the same correction, zero.
 */

/** One reading: the machine's wall clock before and after, and the database's clock between them. */
export interface OffsetReading {
  readonly before: number;
  readonly db: number;
  readonly after: number;
}

/** Readings per measurement. */
export const OFFSET_READINGS = 5;

/**
 * The offset (`db - local`, ms) `readings` show: the one with the shortest round trip, or 0 when its
 * offset is within its uncertainty (half the round trip, plus a millisecond for the whole-millisecond
 * readings on both sides). @throws on no readings
 */
export function offsetFromReadings(readings: readonly OffsetReading[]): number {
  let best: OffsetReading | undefined;
  for (const reading of readings) {
    if (best === undefined || reading.after - reading.before < best.after - best.before) {
      best = reading;
    }
  }
  if (best === undefined) throw new RangeError("no clock readings to measure an offset from");
  const offset = best.db - (best.before + best.after) / 2;
  const uncertainty = (best.after - best.before) / 2 + 1;
  return Math.abs(offset) <= uncertainty ? 0 : offset;
}

/** Takes `OFFSET_READINGS` readings one after the other and returns the offset they show. */
export async function measureOffsetMs(
  dbNow: () => Promise<number>,
  wallNow: () => number = Date.now,
): Promise<number> {
  const readings: OffsetReading[] = [];
  for (let i = 0; i < OFFSET_READINGS; i++) {
    const before = wallNow();
    const db = await dbNow();
    readings.push({ before, db, after: wallNow() });
  }
  return offsetFromReadings(readings);
}
