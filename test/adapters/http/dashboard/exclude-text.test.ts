/**
 * The dashboard's days to skip, one per line (browser/exclude-text.js): each spelling read as its item
 * of `exclude` and written back, and the item behind an excluded fire in words.
 */
import { describe, expect, it } from "vitest";
import {
  exclusionWords,
  itemOfLine,
  itemsOfText,
  textOfItems,
} from "../../../../src/adapters/http/dashboard/browser/exclude-text.js";

describe("the days to skip as lines", () => {
  it.each([
    ["2026-12-25", "2026-12-25"],
    ["2026-12-24..2026-12-26", { from: "2026-12-24", to: "2026-12-26" }],
    ["days:25 12 *", { days: "25 12 *" }],
    ["* * sat,sun", { days: "* * sat,sun" }],
    ["calendar:holidays", { calendar: "holidays" }],
    ['{"days": "L * ?"}', { days: "L * ?" }],
  ])("reads %j", (line, item) => {
    expect(itemOfLine(`  ${line} `)).toEqual(item);
  });

  it("reads a text area line by line, skipping blank lines, and writes the items back", () => {
    const text = "2026-12-25\n\n  2026-12-24..2026-12-26\ndays:* * sun\ncalendar:team\n";
    const items = itemsOfText(text);
    expect(items).toEqual([
      "2026-12-25",
      { from: "2026-12-24", to: "2026-12-26" },
      { days: "* * sun" },
      { calendar: "team" },
    ]);
    expect(textOfItems(items)).toBe(
      "2026-12-25\n2026-12-24..2026-12-26\ndays:* * sun\ncalendar:team",
    );
    expect(textOfItems(undefined)).toBe("");
  });

  it("says the item behind an excluded fire", () => {
    expect(exclusionWords({ item: "2026-12-25", calendar: "holidays" })).toBe(
      'the date 2026-12-25 of calendar "holidays"',
    );
    expect(exclusionWords({ item: { from: "2026-12-24", to: "2026-12-26" }, calendar: null })).toBe(
      "the dates 2026-12-24 to 2026-12-26",
    );
    expect(exclusionWords({ item: { days: "* * sun" }, calendar: null })).toBe(
      'the day rule "* * sun"',
    );
  });
});
