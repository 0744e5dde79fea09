/**
 * The hand check of a once schedule (soundOnceSchedule in
 * src/adapters/storage/shared/stored-task-fields.ts) stands in for zod's check of the stored shape on the
 * burst's path: it may send a sound schedule on to zod, but must never pass one zod refuses.
 */
import { describe, expect, it } from "vitest";
import {
  decodeTaskFields,
  soundOnceSchedule,
  storedScheduleAccepts,
} from "../../../../src/adapters/storage/shared/stored-task-fields.js";
import type { Instant } from "../../../../src/domain/time.js";

const SOUND = {
  type: "once",
  runAt: 1_765_000_000_000,
  localRunAt: null,
  timezone: "UTC",
  startAt: null,
  endAt: null,
  maxRuns: null,
  jitterMs: 0,
};

const ODD_VALUES: readonly unknown[] = [
  undefined,
  null,
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53),
  Infinity,
  -Infinity,
  NaN,
  "",
  "1",
  "UTC",
  "Europe/Paris",
  "Mars/Olympus",
  "utc",
  true,
  false,
  [],
  [1],
  {},
  { runAt: 1 },
];

/** Every schedule one field away from `SOUND`: each field set to each odd value, or removed. */
function variants(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ ...SOUND }, { ...SOUND, extra: "kept" }];
  for (const field of [...Object.keys(SOUND), "cron"]) {
    const without = Object.fromEntries(Object.entries(SOUND).filter(([key]) => key !== field));
    out.push(without);
    for (const value of ODD_VALUES) out.push({ ...SOUND, [field]: value });
  }
  return out;
}

describe("a once schedule checked by hand", () => {
  it("passes nothing the stored shape's check refuses", () => {
    const all = variants();
    for (const value of [...all, null, [], "once", 1, [SOUND]]) {
      if (soundOnceSchedule(value)) {
        expect({ value, accepted: storedScheduleAccepts(value) }).toEqual({
          value,
          accepted: true,
        });
      }
    }
    // The check is used: the sound schedules of a burst pass by hand, without zod.
    const passed = all.filter(soundOnceSchedule);
    expect(passed.length).toBeGreaterThan(20);
    expect(soundOnceSchedule(SOUND)).toBe(true);
    expect(soundOnceSchedule({ ...SOUND, timezone: "Europe/Paris", maxRuns: 3 })).toBe(true);
  });

  it("leaves a refused schedule's defect to the stored shape's check, message included", () => {
    const fields = decodeTaskFields(
      {
        schedule: JSON.stringify({ ...SOUND, jitterMs: -1 }),
        target: JSON.stringify({ kind: "handler", name: "h", input: null }),
        context: JSON.stringify({ mode: "fresh_thread_per_run" }),
        options: JSON.stringify({
          overlap: "skip",
          catchUp: { windowMs: 0, policy: "latest" },
          lateAfterMs: 0,
          retry: { maxAttempts: 1, initialMs: 0, maxDelayMs: 0 },
          runTimeoutMs: 0,
          queueTimeoutMs: 0,
        }),
        metadata: "{}",
      },
      0 as Instant,
    );
    expect(fields.defects).toHaveLength(1);
    expect(fields.defects[0]?.field).toBe("schedule");
    expect(fields.defects[0]?.message).toMatch(/jitterMs/);
  });
});
