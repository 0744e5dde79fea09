/**
 * The strict Vixie grammar of docs/schedules.md#cron: every accepted form and every rejection reason, with the message
 * naming the cron field.
 */
import { describe, expect, it } from "vitest";
import { parseCron } from "../../../src/domain/schedule/cron-expression.js";
import type { CronExpression } from "../../../src/domain/schedule/cron-expression.js";

function parsed(text: string): CronExpression {
  const result = parseCron(text);
  if (!result.ok) throw new Error(`expected ${text} to parse: ${result.problems.join("; ")}`);
  return result.value;
}

function problems(text: string): readonly string[] {
  const result = parseCron(text);
  if (result.ok) throw new Error(`expected ${text} to be rejected`);
  return result.problems;
}

const range = (from: number, to: number, step = 1): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

describe("parseCron", () => {
  describe("accepts", () => {
    it.each([
      ["*", range(0, 59)],
      ["*/15", [0, 15, 30, 45]],
      ["*/90", [0]],
      ["7", [7]],
      ["10-13", [10, 11, 12, 13]],
      ["10-30/10", [10, 20, 30]],
      ["5,1,5,3", [1, 3, 5]],
      ["0-4/2,30", [0, 2, 4, 30]],
      ["07", [7]],
      ["59", [59]],
    ])("the minute item %s", (item, minutes) => {
      expect(parsed(`${item} * * * *`).minutes).toEqual(minutes);
    });

    it("restarts steps at the range start of each period: 0 */7 * * * is hours 0, 7, 14, 21", () => {
      expect(parsed("0 */7 * * *").hours).toEqual([0, 7, 14, 21]);
    });

    it.each([
      ["jan", [1]],
      ["DEC", [12]],
      ["Mar-May", [3, 4, 5]],
      ["jan-jun/2", [1, 3, 5]],
      ["feb,3,apr", [2, 3, 4]],
      ["*/4", [1, 5, 9]],
    ])("the month item %s (names in any case, also as range ends)", (item, months) => {
      expect(parsed(`0 0 1 ${item} *`).months).toEqual(months);
    });

    it.each([
      ["mon-fri", [1, 2, 3, 4, 5]],
      ["SUN", [0]],
      ["7", [0]],
      ["5-7", [0, 5, 6]],
      ["sun,sat", [0, 6]],
      ["*/2", [0, 2, 4, 6]],
      ["Fri-sun", null],
    ])("the day-of-week item %s (7 is Sunday)", (item, days) => {
      if (days === null) expect(problems(`0 0 * * ${item}`)[0]).toMatch(/day-of-week field/);
      else expect(parsed(`0 0 * * ${item}`).daysOfWeek).toEqual(days);
    });

    it("reads 6 fields with a leading second", () => {
      const cron = parsed("*/20 30 9 * * *");
      expect([cron.seconds, cron.minutes, cron.hours]).toEqual([[0, 20, 40], [30], [9]]);
    });

    it("gives a 5-field expression an implicit second 0", () => {
      expect(parsed("30 9 * * *").seconds).toEqual([0]);
    });

    it("normalises blanks, and ignores leading and trailing ones", () => {
      expect(parsed("  0\t9  *   * \t mon-fri ").text).toBe("0 9 * * mon-fri");
    });

    it.each([
      ["@yearly", "0 0 1 1 *"],
      ["@annually", "0 0 1 1 *"],
      ["@monthly", "0 0 1 * *"],
      ["@weekly", "0 0 * * 0"],
      ["@daily", "0 0 * * *"],
      ["@midnight", "0 0 * * *"],
      ["@hourly", "0 * * * *"],
    ])("expands the shortcut %s as %s", (shortcut, meaning) => {
      const expression = parsed(shortcut);
      expect(expression.text).toBe(shortcut);
      expect({ ...expression, text: meaning }).toEqual(parsed(meaning));
    });

    it.each([
      ["0 9 * * *", true],
      ["30 2 * * *", true],
      ["0 1-3 * * *", true],
      ["0,30 2 * * *", true],
      ["0 0 9 * * *", true],
      ["@daily", true],
      ["@weekly", true],
      ["*/15 2 * * *", false],
      ["0 * * * *", false],
      ["* 2 * * *", false],
      ["*/10 0 2 * * *", false],
      ["@hourly", false],
    ])("classes %s as fixed-time: %s", (text, fixed) => {
      expect(parsed(text).fixedTime).toBe(fixed);
    });

    it.each([
      ["0 0 * * *", false, false],
      ["0 0 */2 * *", false, false],
      ["0 0 1 * *", true, false],
      ["0 0 * * 1", false, true],
      ["0 0 1 * */2", true, false],
      ["0 0 1,15 * mon", true, true],
    ])(
      "reads %s's day fields as restricted (%s, %s) by their first character",
      (text, dom, dow) => {
        const cron = parsed(text);
        expect([cron.dayOfMonthRestricted, cron.dayOfWeekRestricted]).toEqual([dom, dow]);
      },
    );
  });

  describe("rejects", () => {
    it.each([
      ["0 9 * *", /expected 5 fields .* got 4/],
      ["0", /got 1/],
      ["0 0 9 * * * *", /got 7/],
      ["", /empty/],
      ["   ", /empty/],
    ])("the wrong field count in %j", (text, message) => {
      expect(problems(text)).toEqual([expect.stringMatching(message)]);
    });

    it.each([
      ["60 * * * *", "minute field: 60 is out of range 0-59"],
      ["0 24 * * *", "hour field: 24 is out of range 0-23"],
      ["0 0 0 * *", "day-of-month field: 0 is out of range 1-31"],
      ["0 0 32 * *", "day-of-month field: 32 is out of range 1-31"],
      ["0 0 * 13 *", "month field: 13 is out of range 1-12"],
      ["0 0 * 0 *", "month field: 0 is out of range 1-12"],
      ["* * * * 8", "day-of-week field: 8 is out of range 0-7"],
      ["* * * * 99", "day-of-week field: 99 is out of range 0-7"],
      ["60 * * * * *", "second field: 60 is out of range 0-59"],
      ["0 0-60 * * *", "hour field: 60 is out of range 0-23"],
    ])("out-of-range values: %s", (text, message) => {
      expect(problems(text)).toEqual([message]);
    });

    it.each([
      ["*/0 * * * *", /^minute field: step 0 .* at least 1/],
      ["5-10/0 * * * *", /^minute field: step 0/],
      ["10-5 * * * *", /^minute field: range 10-5 is descending/],
      ["0 0 * dec-jan *", /^month field: range dec-jan is descending/],
      ["0 0 * * fri-mon", /^day-of-week field: range fri-mon is descending/],
      ["1,,2 * * * *", /^minute field: empty item/],
      ["1, * * * *", /^minute field: empty item/],
      [",1 * * * *", /^minute field: empty item/],
      ["5/15 * * * *", /^minute field: "5\/15" has a step without a range/],
      ["0 0 * jan/2 *", /^month field: "jan\/2" has a step without a range/],
      ["*/x * * * *", /^minute field: step "x" .* is not a number/],
      ["*/ * * * *", /^minute field: step "" .* is not a number/],
      ["*/2/3 * * * *", /^minute field: .* more than one step/],
      ["1-2-3 * * * *", /^minute field: "1-2-3" is not a valid value or range/],
      ["-5 * * * *", /^minute field: "-5" is not a valid value or range/],
      ["x x x x x", /^second|^minute field: "x" is not a number/],
      [
        "0 0 * * monday",
        /^day-of-week field: full names such as "monday" are not supported: use "mon"/,
      ],
      ["0 0 1 january *", /^month field: full names such as "january" are not supported/],
      ["0 0 * * mo", /^day-of-week field: "mo" is not a day name/],
      ["0 0 * foo *", /^month field: "foo" is not a month name/],
      ["0 jan * * *", /^hour field: "jan" is not a number/],
      ["0 0 * * 1.5", /^day-of-week field: "1.5" is not a number/],
    ])("%s", (text, message) => {
      expect(problems(text)[0]).toMatch(message);
    });

    it("names every faulty field at once", () => {
      expect(problems("60 24 * * *")).toEqual([
        "minute field: 60 is out of range 0-59",
        "hour field: 24 is out of range 0-23",
      ]);
    });

    it.each([
      ["@reboot", /^@reboot is not supported/],
      ["@DAILY", /^shortcuts are lower case: write @daily/],
      ["@Hourly", /^shortcuts are lower case: write @hourly/],
      ["@every", /^unknown shortcut @every/],
      ["@fortnightly", /^unknown shortcut/],
      ["@daily 1", /^unknown shortcut/],
    ])("the shortcut %s", (text, message) => {
      expect(problems(text)).toEqual([expect.stringMatching(message)]);
    });
  });
});
