/**
 * `punctual next` (docs/operations.md), run in-process with captured output and a fixed "now".
 */
import { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { nextCommand } from "../../src/cli/next-command.js";

interface Captured {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[], now = "2026-06-01T12:00:00Z"): Promise<Captured> {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: (text: string) => (stdout += text),
    stderr: (text: string) => (stderr += text),
    now: () => new Date(now),
  };
  const program = new Command("punctual").exitOverride().addCommand(nextCommand(io));
  let code = 0;
  try {
    await program.parseAsync(["node", "punctual", "next", ...args]);
  } catch (error) {
    code = (error as { exitCode?: number }).exitCode ?? -1;
  }
  return { code, stdout, stderr };
}

describe("punctual next", () => {
  it("previews an RFC 5545 recurrence with --rrule, its lines on one argument", async () => {
    const result = await run([
      "--rrule",
      "DTSTART;TZID=America/New_York:20240309T023000 RRULE:FREQ=DAILY",
      "--from",
      "2024-03-09T00:00:00Z",
      "--count",
      "3",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      'next 3 fires of "FREQ=DAILY" in America/New_York after 2024-03-09T00:00:00Z:',
      "2024-03-09T07:30:00Z  2024-03-09 02:30:00 -05:00",
      "2024-03-10T07:30:00Z  2024-03-10 03:30:00 -04:00  DST: 02:30 does not exist (clocks jump forward), read with the offset before the gap (RFC 5545 3.3.5)",
      "2024-03-11T06:30:00Z  2024-03-11 02:30:00 -04:00",
      "",
    ]);
    const both = await run(["0 9 * * *", "--rrule", "DTSTART:20260101T000000Z\\nRRULE:FREQ=DAILY"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/not both/);
    const broken = await run(["--rrule", "DTSTART:20260101T000000Z\\nRRULE:FREQ=WEEKLY;BYDAY=1MO"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/invalid --rrule: line 2: RRULE: BYDAY: an ordinal weekday/);
  });

  it("prints the issue's acceptance example as JSON", async () => {
    const result = await run([
      "30 2 * * *",
      "--tz",
      "America/New_York",
      "--from",
      "2024-03-09T00:00:00Z",
      "--count",
      "3",
      "--json",
    ]);
    expect(result).toEqual({
      code: 0,
      stdout: '["2024-03-09T07:30:00Z","2024-03-10T07:00:00Z","2024-03-11T06:30:00Z"]\n',
      stderr: "",
    });
  });

  it("prints UTC and local wall time per fire, marking moved fires", async () => {
    const result = await run([
      "30 2 * * *",
      "--tz",
      "America/New_York",
      "--from",
      "2024-03-09T00:00:00Z",
      "--count",
      "3",
    ]);
    expect(result.stdout.split("\n")).toEqual([
      'next 3 fires of "30 2 * * *" in America/New_York after 2024-03-09T00:00:00Z:',
      "2024-03-09T07:30:00Z  2024-03-09 02:30:00 -05:00",
      "2024-03-10T07:00:00Z  2024-03-10 03:00:00 -04:00  DST: 02:30 does not exist (clocks jump forward), fired at the transition",
      "2024-03-11T06:30:00Z  2024-03-11 02:30:00 -04:00",
      "",
    ]);
  });

  it("prints the fires an overlap suppresses", async () => {
    const result = await run([
      "30 1 * * *",
      "--tz",
      "America/New_York",
      "--from",
      "2026-10-31T12:00:00Z",
      "--count",
      "2",
    ]);
    expect(result.stdout.split("\n").slice(1, 4)).toEqual([
      "2026-11-01T05:30:00Z  2026-11-01 01:30:00 -04:00  DST: this wall time happens twice; first pass",
      "  not fired: 2026-11-01 01:30:00 at 2026-11-01T06:30:00Z (repeated by DST: fixed-time schedules fire on the first pass only)",
      "2026-11-02T06:30:00Z  2026-11-02 01:30:00 -05:00",
    ]);
  });

  it("summarises a run of skipped wall times in one line", async () => {
    const result = await run([
      "0 * * * *",
      "--tz",
      "Pacific/Apia",
      "--from",
      "2011-12-30T08:30:00Z",
      "--count",
      "2",
    ]);
    expect(result.stdout).toContain(
      "  not fired: 24 wall times from 2011-12-30 00:00:00 to 2011-12-30 23:00:00 (does not exist: clocks jump forward)",
    );
  });

  it("starts from the current time, in UTC, with 5 fires by default", async () => {
    const result = await run(["@daily", "--json"], "2026-06-01T12:00:00.500Z");
    expect(JSON.parse(result.stdout)).toEqual([
      "2026-06-02T00:00:00Z",
      "2026-06-03T00:00:00Z",
      "2026-06-04T00:00:00Z",
      "2026-06-05T00:00:00Z",
      "2026-06-06T00:00:00Z",
    ]);
  });

  it("takes Quartz day items: the last business day at 17:00 in New York", async () => {
    const result = await run([
      "0 17 LW * *",
      "--tz",
      "America/New_York",
      "--from",
      "2024-02-01T00:00:00Z",
      "--count",
      "2",
      "--json",
    ]);
    expect(result.stdout).toBe('["2024-02-29T22:00:00Z","2024-03-29T21:00:00Z"]\n');
  });

  it("takes several expressions, lists their union and names the rule behind each fire", async () => {
    const result = await run([
      "0 9 * * 1-5",
      "0 10 * * sat",
      "--tz",
      "Europe/Berlin",
      "--from",
      "2026-06-05T12:00:00Z",
      "--count",
      "3",
    ]);
    expect(result.stdout.split("\n")).toEqual([
      'next 3 fires of "0 9 * * 1-5", "0 10 * * sat" in Europe/Berlin after 2026-06-05T12:00:00Z:',
      "2026-06-06T08:00:00Z  2026-06-06 10:00:00 +02:00  (0 10 * * sat)",
      "2026-06-08T07:00:00Z  2026-06-08 09:00:00 +02:00  (0 9 * * 1-5)",
      "2026-06-09T07:00:00Z  2026-06-09 09:00:00 +02:00  (0 9 * * 1-5)",
      "",
    ]);
  });

  it("skips the --exclude days (dates, ranges, day fields) and says what they excluded", async () => {
    const args = ["0 8 * * *", "--tz", "Europe/Berlin", "--from", "2026-12-23T12:00:00Z"];
    const result = await run([
      ...args,
      "--count",
      "2",
      "--exclude",
      "2026-12-24..2026-12-25",
      "--exclude",
      "* * sun",
    ]);
    expect(result.stdout.split("\n")).toEqual([
      'next 2 fires of "0 8 * * *" in Europe/Berlin, skipping 2026-12-24..2026-12-25, * * sun after 2026-12-23T12:00:00Z:',
      "  not fired: 2026-12-24 08:00:00 (excluded: the dates 2026-12-24 to 2026-12-25)",
      "  not fired: 2026-12-25 08:00:00 (excluded: the dates 2026-12-24 to 2026-12-25)",
      "2026-12-26T07:00:00Z  2026-12-26 08:00:00 +01:00",
      '  not fired: 2026-12-27 08:00:00 (excluded: the day rule "* * sun")',
      "2026-12-28T07:00:00Z  2026-12-28 08:00:00 +01:00",
      "",
    ]);
    const json = await run([...args, "--count", "1", "--exclude", '{"days": "24 12 *"}', "--json"]);
    expect(json.stdout).toBe('["2026-12-25T07:00:00Z"]\n');
  });

  it("moves an excluded occurrence with --on-excluded and says where it came from", async () => {
    const args = ["0 9 25 * *", "--tz", "Europe/Berlin", "--from", "2026-11-30T00:00:00Z"];
    const result = await run([
      ...args,
      "--count",
      "2",
      "--exclude",
      "2026-12-25",
      "--on-excluded",
      "previous",
    ]);
    expect(result.stdout.split("\n")).toEqual([
      'next 2 fires of "0 9 25 * *" in Europe/Berlin, moving to the previous free date 2026-12-25 after 2026-11-30T00:00:00Z:',
      "2026-12-24T08:00:00Z  2026-12-24 09:00:00 +01:00  moved from 2026-12-25 09:00:00 (excluded: the date 2026-12-25)",
      "2027-01-25T08:00:00Z  2027-01-25 09:00:00 +01:00",
      "",
    ]);
    const refused = await run([...args, "--exclude", "2026-12-25", "--on-excluded", "before"]);
    expect(refused.stderr).toContain("invalid --on-excluded");
  });

  it("reads a day rule written days:FIELDS, as tasks create --exclude does", async () => {
    const args = ["0 8 * * *", "--from", "2026-12-23T12:00:00Z", "--count", "1", "--json"];
    const plain = await run([...args, "--exclude", "24 12 *"]);
    const prefixed = await run([...args, "--exclude", "days:24 12 *"]);
    expect([plain.stdout, prefixed.stdout]).toEqual([
      '["2026-12-25T08:00:00Z"]\n',
      '["2026-12-25T08:00:00Z"]\n',
    ]);
  });

  it("summarises a run of excluded wall times, naming the item (the docs' example)", async () => {
    const result = await run([
      "0 9 * * 1-5",
      "0 10 * * sat",
      "--tz",
      "Europe/Berlin",
      "--from",
      "2026-12-23T12:00:00Z",
      "--exclude",
      "2026-12-24..2026-12-26",
      "--count",
      "1",
    ]);
    expect(result.stdout.split("\n").slice(1, 3)).toEqual([
      "  not fired: 3 wall times from 2026-12-24 09:00:00 to 2026-12-26 10:00:00 (excluded: the dates 2026-12-24 to 2026-12-26)",
      "2026-12-28T08:00:00Z  2026-12-28 09:00:00 +01:00  (0 9 * * 1-5)",
    ]);
  });

  it.each([
    [
      ["0 9 * * *", "60 * * * *"],
      /^punctual next: invalid cron expression 2: minute field: 60 is out of range 0-59\n$/,
    ],
    [
      ["0 9 * * *", "--exclude", "2026-13-01"],
      /^punctual next: invalid --exclude "2026-13-01": "2026-13-01" is not a real date\n$/,
    ],
    [
      ["0 9 * * *", "--exclude", "* *"],
      /^punctual next: invalid --exclude "\* \*": must be the three day fields/,
    ],
    [
      ["0 9 * * *", "--exclude", "calendar:holidays"],
      /^punctual next: invalid --exclude "calendar:holidays": named calendars are kept by a scheduler/,
    ],
    [
      ["0 9 * * *", "--exclude", "2026-01-01", "--exclude", "2026-02-30..2026-03-01"],
      /^punctual next: invalid --exclude "2026-02-30..2026-03-01": "2026-02-30" is not a real date\n$/,
    ],
  ])("exits 2 naming the faulty expression or --exclude for %j", async (args, message) => {
    const result = await run(args);
    expect([result.code, result.stdout]).toEqual([2, ""]);
    expect(result.stderr).toMatch(message);
  });

  it.each([
    [
      ["60 * * * *"],
      /^punctual next: invalid cron expression: minute field: 60 is out of range 0-59\n$/,
    ],
    [
      ["0 9 * * *", "--tz", "europe/berlin"],
      /^punctual next: invalid --tz: "europe\/berlin" is misspelt: the time zone is "Europe\/Berlin"\n$/,
    ],
    [
      ["0 9 * * *", "--count", "0"],
      /^punctual next: invalid --count: must be an integer from 1 to 1000\n$/,
    ],
    [
      ["0 9 * * *", "--from", "yesterday"],
      /^punctual next: invalid --from: "yesterday" is not an ISO-8601.*\n$/,
    ],
    [["0 0 31 2 *"], /^punctual next: invalid cron expression: .*never match a real date.*\n$/],
  ])("exits 2 with one line on stderr for %j", async (args, message) => {
    const result = await run(args);
    expect([result.code, result.stdout]).toEqual([2, ""]);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("main with next", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is registered on the program and maps invalid input to exit code 2", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const code = await main(["node", "punctual", "next", "60 * * * *"]);
    expect(code).toBe(2);
    expect(stderr).toHaveBeenCalledWith(
      "punctual next: invalid cron expression: minute field: 60 is out of range 0-59\n",
    );
  });

  it("exits 2 for a usage error", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(await main(["node", "punctual", "next"])).toBe(2);
    expect(stderr.mock.calls.join("")).toMatch(/give cron expressions or --rrule/);
  });

  it("prints to standard output and exits 0", async () => {
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const code = await main([
      "node",
      "punctual",
      "next",
      "0 9 * * 1-5",
      "--tz",
      "Europe/Berlin",
      "--from",
      "2026-06-05T12:00:00Z",
      "--count",
      "1",
      "--json",
    ]);
    expect(code).toBe(0);
    expect(stdout).toHaveBeenCalledWith('["2026-06-08T07:00:00Z"]\n');
  });
});
