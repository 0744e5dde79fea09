/**
 * The edges of a move (issue 36, docs/schedules.md#moved-occurrences), judged one by one with instants
 * worked out by hand: an interval's zone, a target date that a zone skipped whole, a move past `end_at`,
 * a neighbour on the same date, and the halving search for the last nominal time of a span.
 */
import { describe, expect, it } from "vitest";
import { movedFireOf, lastNominalIn } from "../../../src/domain/schedule/moved-occurrence.js";
import { nextAfter } from "../../../src/domain/schedule/next-after.js";
import { parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const iso = (t: number | null): string | null =>
  t === null ? null : new Date(t).toISOString().replace(".000Z", "Z");

function spec(input: Record<string, unknown>, reference = "2026-01-01T00:00:00Z"): ScheduleSpec {
  return parseSchedule(input, { referenceAt: at(reference) });
}

describe("movedFireOf", () => {
  it("reads an interval's excluded dates in its zone, or in UTC without one", () => {
    const weekly = {
      type: "interval",
      every: "PT168H",
      start_at: "2026-03-01T18:00:00Z",
      exclude: ["2026-03-02"],
      on_excluded: "next",
    };
    const nominal = at("2026-03-01T18:00:00Z");
    // On 1 March in UTC: not excluded, not moved.
    expect(movedFireOf(spec(weekly), nominal)).toBeNull();
    // 2 March 03:00 in Tokyo: excluded, moved to 3 March 03:00 there.
    expect(iso(movedFireOf(spec({ ...weekly, timezone: "Asia/Tokyo" }), nominal))).toBe(
      "2026-03-02T18:00:00Z",
    );
  });

  it("skips an occurrence whose move lands on a date its zone skipped whole", () => {
    // Pacific/Apia had no 2011-12-30: the 29th's 09:00, moved to the next date, has nowhere to fire.
    const daily = spec(
      {
        type: "cron",
        cron: "0 9 * * *",
        timezone: "Pacific/Apia",
        exclude: ["2011-12-29"],
        on_excluded: "next",
      },
      "2011-12-01T00:00:00Z",
    );
    const nominal = nextAfter(daily, at("2011-12-28T21:00:00Z"));
    expect(iso(nominal)).toBe("2011-12-29T19:00:00Z");
    expect(movedFireOf(daily, nominal!)).toBeNull();
  });

  it("does not move an occurrence past end_at", () => {
    const input = {
      type: "cron",
      cron: "0 9 10 * *",
      timezone: "UTC",
      exclude: ["2026-03-10"],
      on_excluded: "next",
    };
    const nominal = at("2026-03-10T09:00:00Z");
    expect(iso(movedFireOf(spec(input), nominal))).toBe("2026-03-11T09:00:00Z");
    expect(movedFireOf(spec({ ...input, end_at: "2026-03-11T08:00:00Z" }), nominal)).toBeNull();
  });

  it("does not move an occurrence past a neighbour on its own date, given or found", () => {
    const twice = spec({
      type: "cron",
      cron: "0 9,17 10 * *",
      timezone: "UTC",
      exclude: ["2026-03-10"],
      on_excluded: "next",
    });
    const morning = at("2026-03-10T09:00:00Z");
    expect(movedFireOf(twice, morning, { following: at("2026-03-10T17:00:00Z") })).toBeNull();
    expect(movedFireOf(twice, morning)).toBeNull();
    // The evening one has no neighbour left on its date: it moves.
    expect(iso(movedFireOf(twice, at("2026-03-10T17:00:00Z")))).toBe("2026-03-11T17:00:00Z");
  });
});

describe("lastNominalIn", () => {
  /** The last nominal time in (after, until], one search per occurrence. */
  function walk(s: ScheduleSpec, after: Instant, until: Instant): Instant | null {
    let last: Instant | null = null;
    for (let t = nextAfter(s, after); t !== null && t <= until; t = nextAfter(s, t)) last = t;
    return last;
  }

  it.each([
    ["0 9 * * *", "2026-03-01T00:00:00Z", "2026-03-04T12:00:00Z"],
    ["0 9 * * *", "2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z"],
    ["*/7 * * * *", "2026-03-01T00:00:00Z", "2026-03-01T05:03:30Z"],
    ["0 9 1 * *", "2026-01-15T00:00:00Z", "2026-07-01T09:00:00Z"],
  ])("finds for %s in (%s, %s] the last a walk finds", (cron, after, until) => {
    const s = spec({ type: "cron", cron, timezone: "Europe/Berlin" });
    expect(iso(lastNominalIn(s, at(after), at(until)))).toBe(iso(walk(s, at(after), at(until))));
  });
});
