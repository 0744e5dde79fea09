/**
 * The stored form of a schedule (src/domain/schedule-codec.ts) judged by what a store needs of it: every
 * schedule type, with every kind of exclusion and a named calendar, comes back through JSON as the spec
 * it was and fires at the same times (a calendar stored as a reference, its items supplied by the store
 * as a task read joins them); values stored by earlier versions decode to the spec they meant;
 * a corrupted rule is refused by name rather than read as something else.
 */
import { describe, expect, it } from "vitest";
import type { Calendar } from "../../src/domain/calendar.js";
import { ownerId } from "../../src/domain/ids.js";
import {
  calendarItemsFromText,
  calendarItemsText,
  decodeCalendarItems,
  decodeSchedule,
  encodeCalendarItems,
  encodeSchedule,
  resolveCalendars,
  unresolvedCalendars,
} from "../../src/domain/schedule-codec.js";
import { nextFireAfter } from "../../src/domain/schedule/next-fire.js";
import type { ScheduleSpec } from "../../src/domain/schedule/schedule-spec.js";
import { parseCalendarItems, parseSchedule } from "../../src/domain/schedule/schedule-spec.js";
import { at } from "./builders.js";

const REFERENCE = at("2026-12-01T00:00:00Z");
const ITEMS = ["2026-12-25", { from: "2026-12-31", to: "2027-01-01" }, { days: "* * sun" }];
const HOLIDAYS: Calendar = {
  owner: ownerId("local"),
  name: "holidays",
  items: parseCalendarItems(
    ["2026-12-24", { days: "L * *" }, { from: "2027-01-04", to: "2027-01-06" }],
    "items",
    20_000,
  ).items,
  version: 3,
  createdAt: REFERENCE,
  updatedAt: REFERENCE,
};

function parse(input: Record<string, unknown>): ScheduleSpec {
  return parseSchedule(input, {
    referenceAt: REFERENCE,
    calendars: new Map([["holidays", HOLIDAYS]]),
  });
}

/** The text a store keeps for `holidays` version 3, as its `calendar_versions` row. */
const HOLIDAYS_TEXT = calendarItemsText(HOLIDAYS.items);

/**
 * Through the codec and JSON, as a store writes and reads it back: the calendar version's items come
 * from the text the store keeps for it.
 */
const roundTrip = (spec: ScheduleSpec): ScheduleSpec =>
  resolveCalendars(decodeSchedule(JSON.parse(JSON.stringify(encodeSchedule(spec)))), (n, v) =>
    n === "holidays" && v === 3 ? calendarItemsFromText(HOLIDAYS_TEXT) : undefined,
  );

/** The next 40 fires after the reference (exclusions applied). */
function fires(spec: ScheduleSpec): string[] {
  const out: string[] = [];
  let after = REFERENCE;
  for (let i = 0; i < 40; i++) {
    const next = nextFireAfter(spec, after);
    if (next === null) break;
    out.push(new Date(next).toISOString());
    after = next;
  }
  return out;
}

/** The spec with each calendar's lazily read items made plain, to compare by value. */
function plain(spec: ScheduleSpec): unknown {
  if (spec.type === "once") return spec;
  return {
    ...spec,
    exclude: spec.exclude.map((e) => (e.kind === "calendar" ? { ...e, items: e.items } : e)),
  };
}

/** A stored value with `keys` left out, as an earlier version wrote it. */
function without(stored: unknown, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(stored as Record<string, unknown>).filter(([key]) => !keys.includes(key)),
  );
}

const EXCLUDE = [...ITEMS, { calendar: "holidays" }];

describe("schedule codec", () => {
  it.each([
    [
      "cron with several rules",
      {
        type: "cron",
        cron: ["0 8 * * *", "30 17 * * 1-5"],
        timezone: "Europe/Paris",
        exclude: EXCLUDE,
      },
    ],
    [
      "cron with day items",
      { type: "cron", cron: "0 9 LW * *", timezone: "UTC", exclude: EXCLUDE },
    ],
    ["interval", { type: "interval", every: "PT7H", timezone: "Europe/Paris", exclude: EXCLUDE }],
    ["interval without exclusions", { type: "interval", every: "PT7H" }],
    [
      "rrule",
      {
        type: "rrule",
        rrule: "DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY",
        exclude: EXCLUDE,
      },
    ],
    ["once", { type: "once", run_at: "2026-12-20T08:00:00Z" }],
  ])("gives back a %s schedule that fires as it did", (_name, input) => {
    const spec = parse(input);
    const back = roundTrip(spec);
    expect(plain(back)).toEqual(plain(spec));
    expect(fires(back)).toEqual(fires(spec));
    expect(fires(spec).length).toBeGreaterThan(0);
  });

  it("stores a cron rule and a day rule as their text, and a calendar as its name and version only", () => {
    const stored = JSON.parse(
      JSON.stringify(encodeSchedule(parse({ type: "cron", cron: "0 8 * * *", exclude: EXCLUDE }))),
    ) as { rules: unknown; exclude: Record<string, unknown>[] };
    expect(stored.rules).toEqual(["0 8 * * *"]);
    expect(stored.exclude[2]).toEqual({ kind: "days", text: "* * sun" });
    expect(stored.exclude[3]).toEqual({ kind: "calendar", name: "holidays", version: 3 });
  });

  it("leaves a reference the store did not supply unresolved, and resolves it from the version's text", () => {
    const spec = parse({ type: "cron", cron: "0 8 * * *", exclude: [{ calendar: "holidays" }] });
    const decoded = decodeSchedule(JSON.parse(JSON.stringify(encodeSchedule(spec))));
    expect(unresolvedCalendars(decoded)).toEqual([{ name: "holidays", version: 3 }]);
    // Another version is not this one: it stays unresolved.
    const other = resolveCalendars(decoded, (n, v) => (v === 4 ? HOLIDAYS.items : undefined));
    expect(unresolvedCalendars(other)).toHaveLength(1);
    const resolved = resolveCalendars(decoded, () => calendarItemsFromText(HOLIDAYS_TEXT));
    expect(unresolvedCalendars(resolved)).toEqual([]);
    expect(fires(resolved)).toEqual(fires(spec));
  });

  it("decodes a calendar stored before its items were one text, and a day rule stored parsed", () => {
    const spec = parse({ type: "interval", every: "PT7H", exclude: EXCLUDE });
    const stored = JSON.parse(JSON.stringify(encodeSchedule(spec))) as {
      exclude: Record<string, unknown>[];
    };
    const items = (JSON.parse(HOLIDAYS_TEXT) as unknown[]).map((item) =>
      typeof item === "number"
        ? { kind: "date", day: item }
        : typeof item === "string"
          ? { kind: "days", text: item, rule: { stale: true } }
          : { kind: "range", from: (item as number[])[0], to: (item as number[])[1] },
    );
    const older = {
      ...stored,
      exclude: [
        ...stored.exclude.slice(0, 3),
        { kind: "calendar", name: "holidays", version: 3, items },
      ],
    };
    const back = decodeSchedule(older);
    expect(plain(back)).toEqual(plain(spec));
    expect(fires(back)).toEqual(fires(spec));
    // Stored before as one text (`itemsJson`): decoded from it.
    const asText = decodeSchedule({
      ...stored,
      exclude: [
        ...stored.exclude.slice(0, 3),
        { kind: "calendar", name: "holidays", version: 3, itemsJson: HOLIDAYS_TEXT },
      ],
    });
    expect(fires(asText)).toEqual(fires(spec));
  });

  it("decodes an interval stored before zones and exclusions, and an rrule stored without exclusions", () => {
    const interval = parse({ type: "interval", every: "PT7H" });
    expect(decodeSchedule(without(encodeSchedule(interval), "timezone", "exclude"))).toEqual(
      interval,
    );
    const rrule = parse({
      type: "rrule",
      rrule: "DTSTART;TZID=UTC:20261201T090000\nRRULE:FREQ=DAILY",
    });
    expect(decodeSchedule(without(encodeSchedule(rrule), "exclude"))).toEqual(rrule);
    const cron = parse({ type: "cron", cron: "0 8 * * *" });
    expect(decodeSchedule(without(encodeSchedule(cron), "exclude"))).toEqual(cron);
    const noRules = without(encodeSchedule(cron), "exclude", "rules");
    expect(decodeSchedule(noRules)).toMatchObject({ type: "cron", rules: [], exclude: [] });
  });

  it("reads calendar items stored as objects in the text, and a parsed rule stored whole", () => {
    const spec = parse({ type: "cron", cron: "0 8 * * *", exclude: [{ calendar: "holidays" }] });
    const stored = JSON.parse(JSON.stringify(encodeSchedule(spec))) as Record<string, unknown>;
    const objects = encodeCalendarItems(HOLIDAYS.items);
    const parsedRule = spec.type === "cron" ? spec.rules[0] : null;
    const older = {
      ...stored,
      rules: [JSON.parse(JSON.stringify(parsedRule))],
      exclude: [
        { kind: "calendar", name: "holidays", version: 3, itemsJson: JSON.stringify(objects) },
      ],
    };
    const back = decodeSchedule(older);
    expect(plain(back)).toEqual(plain(spec));
    expect(fires(back)).toEqual(fires(spec));
  });

  it("refuses a stored rule that does not parse, naming it", () => {
    const stored = encodeSchedule(parse({ type: "cron", cron: "0 8 * * *" })) as Record<
      string,
      unknown
    >;
    expect(() => decodeSchedule({ ...stored, rules: ["61 8 * * *"] })).toThrow(
      /cron "61 8 \* \* \*"/,
    );
  });

  it("stores a calendar's own items with day rules as text and reads them back", () => {
    const stored = JSON.parse(JSON.stringify(encodeCalendarItems(HOLIDAYS.items))) as unknown[];
    expect(stored[1]).toEqual({ kind: "days", text: "L * *" });
    expect(decodeCalendarItems(stored)).toEqual(HOLIDAYS.items);
  });

  it("shares one parse between tasks holding the same calendar text", () => {
    const spec = parse({ type: "cron", cron: "0 8 * * *", exclude: [{ calendar: "holidays" }] });
    const a = roundTrip(spec);
    const b = roundTrip(spec);
    const itemsOf = (s: ScheduleSpec) =>
      s.type === "cron" && s.exclude[0]?.kind === "calendar" ? s.exclude[0].items : null;
    expect(itemsOf(a)).not.toBeNull();
    expect(itemsOf(a)).toBe(itemsOf(b));
  });
});
