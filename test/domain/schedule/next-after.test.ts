/**
 * nextAfter: the reference's TestNextAfter (section 6.1) ported to docs/schedules.md, and the bounds of docs/schedules.md#bounds-and-jitter.
 * The reference's fall-back double fire (its section 3.4) is a bug not ported here.
 */
import { describe, expect, it } from "vitest";
import { nextAfter, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import { withWorkBudget } from "../../../src/domain/schedule/work-budget.js";
import type { Instant } from "../../../src/domain/time.js";
import { nextCronFireOf } from "../../../src/domain/schedule/next-after.js";
import type { CronSchedule } from "../../../src/domain/schedule/schedule-types.js";

const at = (text: string): Instant => instant(Date.parse(text));
const iso = (value: Instant | null): string | null =>
  value === null ? null : new Date(value).toISOString().replace(".000Z", "Z");
const REF = at("2026-01-01T00:00:00Z");
const spec = (input: unknown, referenceAt: Instant = REF): ScheduleSpec =>
  parseSchedule(input, { referenceAt });

describe("nextAfter", () => {
  describe("once", () => {
    const once = spec({ type: "once", run_at: "2026-08-01T09:00:00Z" });

    it("returns run_at while it is in the future", () => {
      expect(iso(nextAfter(once, at("2026-07-31T09:00:00Z")))).toBe("2026-08-01T09:00:00Z");
    });

    it("returns nothing once run_at has passed", () => {
      expect(nextAfter(once, at("2026-08-02T00:00:00Z"))).toBeNull();
    });

    it("returns nothing at exactly run_at (strictly after)", () => {
      expect(nextAfter(once, at("2026-08-01T09:00:00Z"))).toBeNull();
    });

    it("returns a local run_at as UTC in a positive-offset zone (reference #4607)", () => {
      const shanghai = spec({
        type: "once",
        run_at: "2026-08-01T09:00:00",
        timezone: "Asia/Shanghai",
      });
      expect(iso(nextAfter(shanghai, REF))).toBe("2026-08-01T01:00:00Z");
    });

    it("returns a local run_at as UTC in a negative-offset zone", () => {
      const la = spec({
        type: "once",
        run_at: "2026-08-01T09:00:00",
        timezone: "America/Los_Angeles",
      });
      expect(iso(nextAfter(la, REF))).toBe("2026-08-01T16:00:00Z");
    });

    it("agrees with the offset form of the same instant", () => {
      const local = spec({
        type: "once",
        run_at: "2026-08-01T09:00:00",
        timezone: "Asia/Shanghai",
      });
      const offset = spec({ type: "once", run_at: "2026-08-01T09:00:00+08:00" });
      expect(nextAfter(local, REF)).toBe(nextAfter(offset, REF));
    });
  });

  describe("cron", () => {
    it("finds the next occurrence in UTC", () => {
      const daily = spec({ type: "cron", cron: "0 9 * * *" });
      expect(iso(nextAfter(daily, at("2026-04-01T12:00:00Z")))).toBe("2026-04-02T09:00:00Z");
    });

    it("evaluates the expression in the schedule's zone (Shanghai, +08:00)", () => {
      const daily = spec({ type: "cron", cron: "0 9 * * *", timezone: "Asia/Shanghai" });
      expect(iso(nextAfter(daily, at("2026-04-01T12:00:00Z")))).toBe("2026-04-02T01:00:00Z");
    });

    it("absorbs DST: 09:00 New York is 14:00Z before 2026-03-08 and 13:00Z after", () => {
      const daily = spec({ type: "cron", cron: "0 9 * * *", timezone: "America/New_York" });
      expect(iso(nextAfter(daily, at("2026-03-06T12:00:00Z")))).toBe("2026-03-06T14:00:00Z");
      expect(iso(nextAfter(daily, at("2026-03-09T12:00:00Z")))).toBe("2026-03-09T13:00:00Z");
    });

    it("fires a fall-back wall time once, not twice (the reference's bug)", () => {
      const daily = spec({ type: "cron", cron: "30 1 * * *", timezone: "America/New_York" });
      const first = nextAfter(daily, at("2026-10-31T12:00:00Z"));
      expect(iso(first)).toBe("2026-11-01T05:30:00Z");
      expect(iso(nextAfter(daily, first ?? REF))).toBe("2026-11-02T06:30:00Z");
    });

    it("takes an after with milliseconds and returns whole seconds strictly after it", () => {
      const everySecond = spec({ type: "cron", cron: "* * * * * *" });
      expect(iso(nextAfter(everySecond, at("2026-04-01T12:00:00.999Z")))).toBe(
        "2026-04-01T12:00:01Z",
      );
    });

    it("fires nothing before start_at; start_at itself may fire", () => {
      const bounded = spec({ type: "cron", cron: "0 9 * * *", start_at: "2026-05-01T09:00:00Z" });
      expect(iso(nextAfter(bounded, REF))).toBe("2026-05-01T09:00:00Z");
    });

    it("fires nothing after end_at; end_at itself may fire", () => {
      const bounded = spec({ type: "cron", cron: "0 9 * * *", end_at: "2026-01-02T09:00:00Z" });
      expect(iso(nextAfter(bounded, REF))).toBe("2026-01-01T09:00:00Z");
      expect(iso(nextAfter(bounded, at("2026-01-01T09:00:00Z")))).toBe("2026-01-02T09:00:00Z");
      expect(nextAfter(bounded, at("2026-01-02T09:00:00Z"))).toBeNull();
    });
  });

  describe("interval", () => {
    it("fires at anchor + k * every for k >= 1 without start_at", () => {
      const every = parseSchedule(
        { type: "interval", every: "PT5M" },
        { referenceAt: REF, anchorAt: at("2026-01-01T10:00:00Z") },
      );
      expect(iso(nextAfter(every, at("2026-01-01T10:00:00Z")))).toBe("2026-01-01T10:05:00Z");
      expect(iso(nextAfter(every, at("2026-01-01T10:07:00Z")))).toBe("2026-01-01T10:10:00Z");
      expect(iso(nextAfter(every, at("2026-01-01T10:10:00Z")))).toBe("2026-01-01T10:15:00Z");
      expect(iso(nextAfter(every, at("2025-12-31T00:00:00Z")))).toBe("2026-01-01T10:05:00Z");
    });

    it("fires start_at itself, then every period after it", () => {
      const every = spec({ type: "interval", every: 90, start_at: "2026-02-01T00:00:00Z" });
      expect(iso(nextAfter(every, REF))).toBe("2026-02-01T00:00:00Z");
      expect(iso(nextAfter(every, at("2026-02-01T00:00:00Z")))).toBe("2026-02-01T00:01:30Z");
    });

    it("counts elapsed time: P1D drifts against local midnight across DST", () => {
      const every = spec({
        type: "interval",
        every: "P1D",
        start_at: "2024-03-30T23:00:00Z",
      });
      // 2024-03-30T23:00Z is midnight in Berlin (CET); a day later it is 01:00 CEST.
      expect(iso(nextAfter(every, at("2024-03-30T23:00:00Z")))).toBe("2024-03-31T23:00:00Z");
    });

    it("stops at end_at", () => {
      const every = spec({
        type: "interval",
        every: "PT1H",
        start_at: "2026-02-01T00:00:00Z",
        end_at: "2026-02-01T01:30:00Z",
      });
      expect(iso(nextAfter(every, at("2026-02-01T00:30:00Z")))).toBe("2026-02-01T01:00:00Z");
      expect(nextAfter(every, at("2026-02-01T01:00:00Z"))).toBeNull();
    });
  });
});

describe("nextAfter on schedules read back from storage", () => {
  // A stored schedule is a new object on every read; the cron tables are shared by content. These
  // differ in one field each and must never borrow each other's tables.
  const crons = [
    "0 9 * * 1-5",
    "0 9 * * 1-6",
    "0 9 1 * *",
    "0 9 1 * 1",
    "30 9 * * 1-5",
    "0 10 * * 1-5",
    "0 9 * 2 *",
    "15 0 9 * * 1-5",
  ];

  it("fires as the parsed schedule does, each expression by its own fields", () => {
    const from = at("2026-03-10T12:00:00Z");
    const fires = (schedule: ScheduleSpec): string => {
      const seen: (string | null)[] = [];
      let after: Instant | null = from;
      for (let i = 0; i < 8 && after !== null; i++) {
        after = nextAfter(schedule, after);
        seen.push(iso(after));
      }
      return seen.join(" ");
    };
    const expected = crons.map((cron) =>
      fires(spec({ type: "cron", cron, timezone: "Europe/Berlin" })),
    );
    expect(new Set(expected).size).toBe(crons.length);
    for (let round = 0; round < 3; round++) {
      const readBack = crons.map(
        (cron) =>
          JSON.parse(
            JSON.stringify(spec({ type: "cron", cron, timezone: "Europe/Berlin" })),
          ) as ScheduleSpec,
      );
      expect(readBack.map(fires)).toEqual(expected);
    }
  });
});

describe("nextAfter remembers its last answers", () => {
  // One cron rule: each search spends one step of the work budget, a remembered answer none.
  const everySecond = (): ScheduleSpec => spec({ type: "cron", cron: "* * * * * *" });
  const t = at("2026-03-01T10:00:00Z");

  it("answers a question asked again without searching", () => {
    const cron = everySecond();
    const first = withWorkBudget(() => nextAfter(cron, t), 1);
    expect(withWorkBudget(() => nextAfter(cron, t), 0)).toBe(first);
  });

  it("keeps the last two: an admission's watermark, the next nominal time, then the watermark again", () => {
    const cron = everySecond();
    const next = withWorkBudget(() => nextAfter(cron, t), 1);
    const following = withWorkBudget(() => nextAfter(cron, next!), 1);
    // The next admission starts from `next` (its watermark) and asks for `following`'s successor.
    expect(withWorkBudget(() => nextAfter(cron, next!), 0)).toBe(following);
    expect(withWorkBudget(() => nextAfter(cron, t), 0)).toBe(next);
    expect(() => withWorkBudget(() => nextAfter(cron, following!), 0)).toThrow(/too expensive/);
  });

  it("remembers per schedule: another schedule with the same text searches", () => {
    withWorkBudget(() => nextAfter(everySecond(), t), 1);
    expect(() => withWorkBudget(() => nextAfter(everySecond(), t), 0)).toThrow(/too expensive/);
  });
});

describe("a cron search is shared by the schedules of one expression", () => {
  // The tasks of one expression due together ask the same question: one search answers them all.
  const t = at("2026-03-01T10:00:00Z");

  it("answers another schedule with the same text and zone with the fire the first search made", () => {
    const cron = "17 */7 * * * *";
    const first = nextCronFireOf(spec({ type: "cron", cron }) as CronSchedule, t);
    expect(first).not.toBeNull();
    // The very object: no second search was made.
    expect(nextCronFireOf(spec({ type: "cron", cron }) as CronSchedule, t)).toBe(first);
  });

  it("answers an admission's three questions for every schedule of the expression, asked one schedule after the other", () => {
    // A task's first admission on a replica asks after its watermark, after the fire due and after
    // the one following (admission-due.ts); the next task of the expression asks the same three.
    const cron = "26 * * * * *";
    const ask = (): (object | null)[] => {
      const schedule = spec({ type: "cron", cron }) as CronSchedule;
      const answers: (object | null)[] = [];
      let after: number = t;
      for (let i = 0; i < 3; i++) {
        const fire = nextCronFireOf(schedule, after);
        answers.push(fire);
        if (fire === null) break;
        after = fire.at;
      }
      return answers;
    };
    const first = ask();
    expect(first.every((fire) => fire !== null)).toBe(true);
    // The very objects: the second and third schedules searched nothing.
    const second = ask();
    const third = ask();
    first.forEach((fire, i) => {
      expect(second[i]).toBe(fire);
      expect(third[i]).toBe(fire);
    });
  });

  it("keeps answers of other zones, instants and bounds apart", () => {
    const cron = "0 30 2 * * *";
    const zones = ["UTC", "America/New_York", "Asia/Kolkata", "UTC"];
    const answers = zones.map((timezone) => nextAfter(spec({ type: "cron", cron, timezone }), t));
    expect(answers.map((a) => (a === null ? null : new Date(a).toISOString()))).toEqual([
      "2026-03-02T02:30:00.000Z",
      "2026-03-02T07:30:00.000Z",
      "2026-03-01T21:00:00.000Z",
      "2026-03-02T02:30:00.000Z",
    ]);
    const later = nextAfter(
      spec({ type: "cron", cron, timezone: "UTC" }),
      at("2026-03-02T03:00:00Z"),
    );
    expect(later === null ? null : new Date(later).toISOString()).toBe("2026-03-03T02:30:00.000Z");
    const bounded = nextAfter(
      spec({ type: "cron", cron, timezone: "UTC", end_at: "2026-03-01T12:00:00Z" }),
      t,
    );
    expect(bounded).toBeNull();
  });
});
