/**
 * The dashboard's schedule in words: common cron shapes in words, the rest quoted; and the module, as
 * the server serves it to the page, works on its own.
 */
import { describe, expect, it } from "vitest";
import { scheduleInWords } from "../../../../src/adapters/http/dashboard/browser/schedule-in-words.js";
import { call, startTestServer } from "../http-harness.js";

const cron = (expression: string, timezone = "Europe/Paris") =>
  scheduleInWords({ type: "cron", cron: expression, timezone });

describe("scheduleInWords", () => {
  it.each([
    ["0 9 * * *", "every day at 09:00 (Europe/Paris)"],
    ["30 8,17 * * *", "every day at 08:30 and 17:30 (Europe/Paris)"],
    ["0 9 * * 1-5", "every Monday to Friday at 09:00 (Europe/Paris)"],
    ["0 9 * * mon,WED", "every Monday and Wednesday at 09:00 (Europe/Paris)"],
    ["0 0 * * 5-7", "every Friday to Sunday at 00:00 (Europe/Paris)"],
    ["0 6 1,15 * *", "on days 1 and 15 of every month at 06:00 (Europe/Paris)"],
    ["0 12 25 12 *", "every year on December 25 at 12:00 (Europe/Paris)"],
    ["5 * * * *", "every hour at :05 (Europe/Paris)"],
    ["0 */6 * * *", "every 6 hours at :00 (Europe/Paris)"],
    ["* * * * *", "every minute"],
    ["*/15 * * * *", "every 15 minutes"],
    ["*/10 * * * * *", "every 10 seconds"],
    ["0 30 2 * * *", "every day at 02:30 (Europe/Paris)"],
    ["@daily", "every day at 00:00 (Europe/Paris)"],
    ["  0 9 * * *  ", "every day at 09:00 (Europe/Paris)"],
  ])("says %s as %s", (expression, words) => {
    expect(cron(expression)).toBe(words);
  });

  it("quotes the cron text it cannot put in words, with the zone", () => {
    expect(cron("*/5 9-17 * * 1-5")).toBe('cron "*/5 9-17 * * 1-5" (Europe/Paris)');
    expect(cron("0 9 1 * 1")).toBe('cron "0 9 1 * 1" (Europe/Paris)');
    expect(cron("0 0,6,12,18 * * *", "UTC")).toBe(
      "every day at 00:00, 06:00, 12:00 and 18:00 (UTC)",
    );
    expect(cron("0,30 0,6,12,18 * * *", "UTC")).toBe('cron "0,30 0,6,12,18 * * *" (UTC)');
  });

  it("says each of several expressions, the zone once", () => {
    expect(
      scheduleInWords({
        type: "cron",
        cron: ["0 9 * * 1-5", "0 10 * * sat"],
        timezone: "Europe/Berlin",
      }),
    ).toBe("every Monday to Friday at 09:00 and every Saturday at 10:00 (Europe/Berlin)");
    expect(scheduleInWords({ type: "cron", cron: ["*/15 * * * *", "0 17 L * *"] })).toBe(
      'every 15 minutes and cron "0 17 L * *" (UTC)',
    );
    expect(scheduleInWords({ type: "cron", cron: ["0 9 * * *"], timezone: "UTC" })).toBe(
      "every day at 09:00 (UTC)",
    );
  });

  it("says the days a schedule excludes, the first three by name", () => {
    expect(
      scheduleInWords({
        type: "cron",
        cron: "0 8 * * *",
        timezone: "Europe/Paris",
        exclude: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { calendar: "holidays" }],
      }),
    ).toBe(
      'every day at 08:00 (Europe/Paris), except 2026-12-25, 2026-12-24 to 2026-12-26 and calendar "holidays"',
    );
    expect(
      scheduleInWords({
        type: "cron",
        cron: "0 8 * * *",
        exclude: [{ days: "* * sat,sun" }, "2026-01-01", "2026-05-01", "2026-12-25"],
      }),
    ).toBe(
      'every day at 08:00 (UTC), except days "* * sat,sun", 2026-01-01, 2026-05-01 and 1 more',
    );
    expect(
      scheduleInWords({
        type: "interval",
        every: "PT1H",
        timezone: "Pacific/Apia",
        exclude: ["2011-12-30"],
      }),
    ).toBe("every hour, except 2011-12-30 (Pacific/Apia)");
  });

  it("says intervals, from their start, with their bounds", () => {
    expect(scheduleInWords({ type: "interval", every: "PT15M" })).toBe("every 15 minutes");
    expect(scheduleInWords({ type: "interval", every: "P1DT2H" })).toBe("every day and 2 hours");
    expect(scheduleInWords({ type: "interval", every: 90 })).toBe("every 90 seconds");
    expect(
      scheduleInWords({
        type: "interval",
        every: "PT1H",
        start_at: "2026-01-01T00:00:00Z",
        max_runs: 3,
      }),
    ).toBe("every hour from 2026-01-01T00:00:00Z, at most 3 runs");
    expect(
      scheduleInWords({ type: "cron", cron: "0 9 * * *", end_at: "2027-01-01T00:00:00Z" }),
    ).toBe("every day at 09:00 (UTC), until 2027-01-01T00:00:00Z");
  });

  it("says once, in the zone's wall time or in UTC", () => {
    expect(
      scheduleInWords({ type: "once", run_at: "2026-12-01T09:00:00", timezone: "Europe/Berlin" }),
    ).toBe("once at 2026-12-01 09:00 (Europe/Berlin)");
    expect(scheduleInWords({ type: "once", run_at: "2026-12-01T08:00:00Z" })).toBe(
      "once at 2026-12-01 08:00 UTC",
    );
  });

  it("works from the module the page loads, as served", async () => {
    const t = await startTestServer();
    try {
      const served = await call(t.url, "GET", "/dashboard/schedule-in-words.js");
      expect(served.status).toBe(200);
      const url = `data:text/javascript;base64,${Buffer.from(String(served.body)).toString("base64")}`;
      const copy = (await import(/* @vite-ignore */ url)) as {
        scheduleInWords: typeof scheduleInWords;
      };
      expect(
        copy.scheduleInWords({ type: "cron", cron: "0 9 * * 1-5", timezone: "Asia/Tokyo" }),
      ).toBe("every Monday to Friday at 09:00 (Asia/Tokyo)");
    } finally {
      await t.stop();
    }
  });
});
