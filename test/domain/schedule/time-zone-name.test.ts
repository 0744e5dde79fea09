/**
 * Zone names (docs/schedules.md#cron): tz database spellings and backward links accepted; empty, unknown, misspelt,
 * offsets and path-like names rejected; never the machine's zone.
 */
import { describe, expect, it } from "vitest";
import { timeZoneProblem } from "../../../src/domain/schedule/time-zone-name.js";
import { TZ_NAMES_BEYOND_INTL } from "../../../src/domain/schedule/tz-names-beyond-intl.js";

describe("timeZoneProblem", () => {
  it.each([
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "America/Argentina/Buenos_Aires",
    "Asia/Kathmandu",
    "Asia/Calcutta",
    "Asia/Kolkata",
    "US/Eastern",
    "Etc/GMT+5",
    "Etc/GMT-14",
    "Etc/UTC",
    "EST5EDT",
    "GB",
    "GMT+0",
    "America/Port-au-Prince",
    "Antarctica/DumontDUrville",
    "Pacific/Chatham",
    "GB-Eire",
    "Iran",
    "America/Fort_Wayne",
    "Etc/GMT0",
    "Etc/Zulu",
  ])("accepts %s", (name) => {
    expect(timeZoneProblem(name)).toBeNull();
  });

  it.each([
    ["", /must not be empty/],
    ["europe/berlin", /misspelt: the time zone is "Europe\/Berlin"/],
    ["America/new_york", /misspelt: the time zone is "America\/New_York"/],
    ["EUROPE/BERLIN", /misspelt/],
    ["utc", /not an IANA time zone name/],
    ["us/eastern", /not an IANA time zone name/],
    ["US/EASTERN", /misspelt: the time zone is "US\/Eastern"/],
    ["Asia/CALCUTTA", /misspelt: the time zone is "Asia\/Calcutta"/],
    ["ETC/GMT+12", /misspelt: the time zone is "Etc\/GMT\+12"/],
    ["Etc/Utc", /misspelt: the time zone is "Etc\/UTC"/],
    ["Est5edt", /misspelt: the time zone is "EST5EDT"/],
    ["GB-EIRE", /misspelt: the time zone is "GB-Eire"/],
    ["IRAN", /misspelt: the time zone is "Iran"/],
    ["America/Fort_wayne", /misspelt: the time zone is "America\/Fort_Wayne"/],
    ["Europe/Berln", /not a known IANA time zone/],
    ["Mars/Olympus_Mons", /not a known IANA time zone/],
    ["+05:30", /is an offset, not a time zone/],
    ["-03:00", /is an offset/],
    ["UTC+1", /is an offset/],
    ["GMT-5", /is an offset/],
    ["utc+01:00", /is an offset/],
    ["Europe/ Berlin", /contains spaces/],
    [" UTC", /contains spaces/],
    ["America/New York", /contains spaces/],
    ["../etc/passwd", /file path/],
    ["/etc/localtime", /file path/],
    ["Europe\\Berlin", /file path/],
    ["Europe/Berlin/", /file path/],
    ["Europe//Berlin", /not an IANA time zone name/],
    ["Europe/Berlin;rm", /not an IANA time zone name/],
    ["local", /not an IANA time zone name/],
  ])("rejects %j", (name, message) => {
    expect(timeZoneProblem(name)).toMatch(message);
  });

  it("accepts every zone and link as Intl or the tz database spells it", () => {
    const names = [...Intl.supportedValuesOf("timeZone"), ...TZ_NAMES_BEYOND_INTL];
    expect(names.filter((name) => timeZoneProblem(name) !== null)).toEqual([]);
  });
});
