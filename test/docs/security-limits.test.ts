/**
 * docs/security.md states the bounds of a request's work (#bounded-work and the input limits table):
 * each value it gives is the one the code enforces.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEERFLOW_LIST_MAX,
  DEERFLOW_RUNS_OFFSET_MAX,
} from "../../src/adapters/http/deerflow-routes.js";
import { DEFAULT_QUOTAS, QUOTA_NAMES } from "../../src/application/policy/quotas.js";
import type { OwnerQuotas } from "../../src/application/policy/quotas.js";
import { BATCH_EXCLUSION_ITEMS_MAX } from "../../src/application/tasks/create-task-batch.js";
import { HOLIDAY_HORIZON_YEARS } from "../../src/application/calendars/calendar-service.js";
import { MAX_HOLIDAY_YEARS } from "../../src/application/shapes/schedule-input.js";
import { encodeSchedule } from "../../src/domain/schedule-codec.js";
import { parseCalendarItems, parseSchedule } from "../../src/domain/schedule/schedule-spec.js";
import { ownerId } from "../../src/domain/ids.js";
import { instant } from "../../src/domain/time.js";
import { MAX_DST_WARNINGS } from "../../src/domain/schedule/dst-warnings.js";
import {
  MAX_CRON_RULES,
  MAX_EXCLUSION_ITEMS,
  MAX_EXPANDED_EXCLUSION_ITEMS,
  SCHEDULE_WORK_STEPS,
  STORED_SCHEDULE_WORK_STEPS,
} from "../../src/domain/schedule/schedule-spec.js";

const security = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");

/** The table row (its cells, trimmed) whose first cell is `name`. */
function row(name: string): string[] {
  const line = security.split("\n").find((l) => l.startsWith(`| ${name} `));
  if (line === undefined) throw new Error(`docs/security.md has no row "${name}"`);
  return line
    .split("|")
    .slice(1, -1)
    .map((cell) => cell.trim());
}

const n = (value: number): string => value.toLocaleString("en-US");

describe("docs/security.md's bounds", () => {
  it("give the values the code enforces", () => {
    expect(row("cron expressions")[1]).toBe(`${n(MAX_CRON_RULES)} a schedule`);
    expect(row("`exclude` items")[1]).toBe(
      `${n(MAX_EXCLUSION_ITEMS)} a list, ${n(MAX_EXCLUSION_ITEMS)} a calendar`,
    );
    expect(row("exclusions expanded")[1]).toBe(`${n(MAX_EXPANDED_EXCLUSION_ITEMS)} a schedule`);
    expect(row("schedule work")[1]).toBe(`${n(SCHEDULE_WORK_STEPS)} steps an evaluation`);
    expect(row("batch exclusions")[1]).toBe(`${n(BATCH_EXCLUSION_ITEMS_MAX)} items a batch`);
    expect(row("DST warnings")[1]).toBe(`${n(MAX_DST_WARNINGS)} sentences a schedule`);
    expect(row("exclusion items, expanded")[1]).toBe(
      `${n(MAX_EXPANDED_EXCLUSION_ITEMS)} a schedule`,
    );
    expect(row("a stored task's explain")[1]).toBe(`${n(STORED_SCHEDULE_WORK_STEPS)} steps`);
    expect(row("DeerFlow lists")[1]).toBe(
      `${n(DEERFLOW_LIST_MAX)} tasks, runs \`offset\` ${n(DEERFLOW_RUNS_OFFSET_MAX)}`,
    );
    expect(row("`holidays` years")[1]).toBe(
      `${n(MAX_HOLIDAY_YEARS)} a put, kept to this year + ${n(HOLIDAY_HORIZON_YEARS)}`,
    );
    expect(row("a batch")[1]).toBe(
      `${n(BATCH_EXCLUSION_ITEMS_MAX)} exclusion items, yields per task`,
    );
  });

  it("store a named calendar as its name and version, whatever its size", () => {
    expect(row("a named calendar, stored")[1]).toBe("name and version, items once a version");
    const at = instant(Date.UTC(2030, 0, 1));
    const dates = Array.from({ length: 1000 }, (_, i) =>
      new Date(at + i * 86_400_000).toISOString().slice(0, 10),
    );
    const calendar = {
      owner: ownerId("alice"),
      name: "big",
      items: parseCalendarItems(dates, "items", 0).items,
      version: 7,
      createdAt: at,
      updatedAt: at,
    };
    const spec = parseSchedule(
      { type: "cron", cron: "0 8 * * *", exclude: [{ calendar: "big" }] },
      { referenceAt: at, calendars: new Map([["big", calendar]]) },
    );
    const stored = encodeSchedule(spec) as { exclude: unknown[] };
    expect(stored.exclude).toEqual([{ kind: "calendar", name: "big", version: 7 }]);
  });

  it("give every quota with its default", () => {
    for (const [key, name] of Object.entries(QUOTA_NAMES) as [keyof OwnerQuotas, string][]) {
      const value = DEFAULT_QUOTAS[key];
      const shown = key === "minPeriodMs" ? `${n(value / 1000)} s` : n(value);
      expect(row(`\`${name}\``)[1], name).toBe(shown);
    }
  });
});
