/**
 * The CLI's business calendars end to end (issue 22): `punctual serve` runs as a process on a temporary
 * SQLite file, and `punctual calendars ...` and `punctual tasks ...` run as processes against it: a
 * calendar put from the command line, a task with two rules and the calendar in its exclude, its
 * preview naming the rule and the excluded fires, the refused delete naming the task (exit 1), a bad
 * item (exit 2), and the delete once no task names the calendar.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { createToken, runCli, startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

let dir: string;
let serve: CliProcess | null = null;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-cli-calendars-e2e-"));
}, 240_000);
afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** The UTC date `days` days from now, `YYYY-MM-DD`. */
function dateIn(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

describe("punctual calendars and tasks with exclude, against punctual serve", () => {
  it("puts a calendar, names it in a task's exclude, previews it and refuses its delete", async () => {
    const db = join(dir, "punctual.db");
    const token = await createToken(db, "e2e");
    serve = startCli(["serve", "--database", db, "--port", "0", "--no-coordinator"], { cwd: dir });
    const server = serve;
    const url = await waitFor(
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(server.output())?.[1],
      { timeoutMs: 20_000, what: "the server to listen", describe: () => server.output() },
    );
    const cli = (...args: string[]) =>
      runCli(args, { cwd: dir, env: { PUNCTUAL_URL: url, PUNCTUAL_TOKEN: token, TZ: "UTC" } });

    const holiday = dateIn(2);
    const put = await cli("calendars", "put", "holidays", holiday, "days:25 12 *");
    expect(put.stderr).toBe("");
    expect(put.code).toBe(0);
    expect(put.stdout).toContain(`items            2\n  ${holiday}\n  days:25 12 *\n`);

    const created = await cli(
      "tasks",
      "create",
      "--json",
      "--title",
      "twice a day",
      "--cron",
      "0 9 * * *",
      "--cron",
      "0 18 * * *",
      "--exclude",
      "calendar:holidays",
    );
    expect(created.code, created.stderr).toBe(0);
    const task = (JSON.parse(created.stdout) as { task: { id: string; schedule: unknown } }).task;
    expect(task.schedule).toEqual({
      type: "cron",
      cron: ["0 9 * * *", "0 18 * * *"],
      timezone: "UTC",
      exclude: [{ calendar: "holidays" }],
    });

    const preview = await cli("tasks", "preview", task.id, "--count", "6");
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout.split("\n")[0]).toMatch(/^UTC +WALL TIME +OFFSET +LOCAL +RULE +DST$/);
    expect(preview.stdout).toContain(
      `  not fired: ${holiday} 09:00:00 (excluded: the date ${holiday} of calendar "holidays")\n` +
        `  not fired: ${holiday} 18:00:00 (excluded: the date ${holiday} of calendar "holidays")\n`,
    );
    expect(preview.stdout).toMatch(/T18:00:00Z .* 0 18 \* \* \*\n/);

    const refused = await cli("calendars", "delete", "holidays");
    expect(refused).toEqual({
      code: 1,
      stdout: "",
      stderr:
        `punctual: A task uses this calendar (409): calendar "holidays" is used by task ${task.id} ` +
        `("twice a day"): remove it from that task's exclude (and any other's) first\n`,
    });
    const bad = await cli("calendars", "put", "holidays", "2026-02-30");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('items.0: "2026-02-30" is not a real date');

    expect((await cli("tasks", "delete", task.id)).code).toBe(0);
    expect(await cli("calendars", "delete", "holidays")).toEqual({
      code: 0,
      stdout: "deleted calendar holidays\n",
      stderr: "",
    });
    expect((await cli("calendars", "list")).stdout).toBe("NAME  VERSION  UPDATED  ITEMS\n");

    const exit = await stopCli(server, "SIGTERM");
    expect(exit.code, server.output()).toBe(0);
  }, 90_000);
});
