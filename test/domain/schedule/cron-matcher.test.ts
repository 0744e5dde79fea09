/**
 * The cron matcher's searches judged by brute force (issue 36): `countMatchingWalls` against a count of
 * every wall second of the span whose fields are in the expression's sets, for spans that cut hours at
 * both ends; and the search ending at the last year it covers.
 */
import { describe, expect, it } from "vitest";
import { wallMs } from "../../../src/domain/schedule/civil-time.js";
import type { CronExpression } from "../../../src/domain/schedule/cron-expression.js";
import { parseCron } from "../../../src/domain/schedule/cron-expression.js";
import {
  countMatchingWalls,
  firstMatchingWall,
} from "../../../src/domain/schedule/cron-matcher.js";
import { MAX_YEAR } from "../../../src/domain/schedule/zone-offsets.js";

function cron(text: string): CronExpression {
  const parsed = parseCron(text);
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  return parsed.value;
}

/** Every second of `[from, to)` whose UTC fields are in the expression's sets (day fields left all-match). */
function bruteForce(
  e: CronExpression,
  from: number,
  to: number,
): { first: number | null; count: number } {
  let first: number | null = null;
  let count = 0;
  for (let wall = Math.ceil(from / 1000) * 1000; wall < to; wall += 1000) {
    const d = new Date(wall);
    const hit =
      e.seconds.includes(d.getUTCSeconds()) &&
      e.minutes.includes(d.getUTCMinutes()) &&
      e.hours.includes(d.getUTCHours());
    if (hit) {
      first ??= wall;
      count++;
    }
  }
  return { first, count };
}

describe("countMatchingWalls", () => {
  const start = wallMs(2026, 3, 2);
  it.each([
    ["*/15 * * * *", start + 10 * 60_000, start + 100 * 60_000],
    ["*/15 * * * *", start + 15 * 60_000, start + 3 * 3_600_000 + 15 * 60_000],
    [
      "*/20 */7 9-10 * * *",
      start + 9 * 3_600_000 + 59_999,
      start + 10 * 3_600_000 + 30 * 60_000 + 1,
    ],
    ["0 0 * * *", start + 1, start + 2 * 86_400_000],
    ["5 4 * * *", start + 4 * 3_600_000 + 6 * 60_000, start + 28 * 3_600_000 + 5 * 60_000],
  ])(
    "counts %s in a span that cuts its hours as a second-by-second count does",
    (text, from, to) => {
      const e = cron(text);
      expect(countMatchingWalls(e, from, to)).toEqual(bruteForce(e, from, to));
    },
  );

  it("counts nothing in a span with no match", () => {
    expect(countMatchingWalls(cron("0 12 * * *"), start, start + 3_600_000)).toEqual({
      first: null,
      count: 0,
    });
  });
});

describe("firstMatchingWall", () => {
  it("ends its search after the last year it covers", () => {
    const yearly = cron("0 0 1 1 *");
    expect(firstMatchingWall(yearly, wallMs(MAX_YEAR, 1, 1), Infinity)).toBe(
      wallMs(MAX_YEAR, 1, 1),
    );
    expect(firstMatchingWall(yearly, wallMs(MAX_YEAR, 1, 1, 0, 0, 1), Infinity)).toBeNull();
  });
});
