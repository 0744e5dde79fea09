/** The least gap between fires that the `min_period` quota checks (docs/security.md#quotas). */
import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../../src/domain/schedule/parse-schedule.js";
import { smallestPeriodMs } from "../../../src/domain/schedule/smallest-period.js";
import { instant } from "../../../src/domain/time.js";

const NOW = instant(Date.UTC(2026, 0, 5, 12, 0, 0));
const spec = (input: unknown) => parseSchedule(input, { referenceAt: NOW });

describe("smallestPeriodMs", () => {
  it.each([
    [{ type: "cron", cron: "* * * * * *", timezone: "UTC" }, 1_000],
    [{ type: "cron", cron: "0,1 * * * * *", timezone: "UTC" }, 1_000],
    [{ type: "cron", cron: "*/15 * * * *", timezone: "UTC" }, 900_000],
    [{ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }, 86_400_000],
    [{ type: "interval", every: "PT2M" }, 120_000],
  ])("finds the least gap of %j", (input, expected) => {
    expect(smallestPeriodMs(spec(input), NOW)).toBe(expected);
  });

  it("has none for a once schedule", () => {
    expect(
      smallestPeriodMs(spec({ type: "once", run_at: "2026-02-01T00:00:00Z" }), NOW),
    ).toBeNull();
  });
});
