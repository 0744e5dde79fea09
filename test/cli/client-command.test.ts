/**
 * `punctual tasks ...` and `punctual runs ...` against a real server on port 0 whose clock stands still:
 * the human output (tables, details, warnings), `--json`, and the exit codes (0 ok, 1 failure, 2 a
 * request refused as invalid or a usage error). Ids are replaced by `id-N` placeholders of the same
 * width, so the columns line up as the CLI printed them; page cursors (which encode ids) by `<cursor>`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientCommands } from "../../src/cli/client-command.js";
import { runProgram } from "../../src/cli/main.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { instantFlag } from "../../src/cli/run-list-command.js";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";
import { closedPort } from "../helpers/webhook-receiver.js";

/** Saturday 2026-03-07 12:00 UTC: New York springs forward the next night. */
const NOW = Date.parse("2026-03-07T12:00:00Z");

let t: TestServer;
let token: string;
let dir: string;
const ids = new Map<string, string>();

beforeAll(async () => {
  t = await startTestServer({ clock: new VirtualClock(NOW) });
  token = await t.token("alice");
  dir = mkdtempSync(join(tmpdir(), "punctual-cli-client-"));
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Replaces every id by `id-N` (numbered in order of first sight), padded to the id's width. */
function normalized(text: string): string {
  const cursorless = text.replace(/(next page: --cursor )\S+/g, "$1<cursor>");
  return cursorless.replace(UUID, (id) => {
    let name = ids.get(id);
    if (name === undefined) {
      name = `id-${ids.size + 1}`.padEnd(id.length, ".");
      ids.set(id, name);
    }
    return name;
  });
}

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: { PUNCTUAL_URL: t.url, PUNCTUAL_TOKEN: token, ...env },
    stdout: (text: string) => (stdout += text),
    stderr: (text: string) => (stderr += text),
    timeZone: "Europe/Berlin",
  };
  const program = new Command("punctual").exitOverride();
  program.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const command of clientCommands(io)) program.addCommand(command);
  const code = await runProgram(program, ["node", "punctual", ...args], io.stderr);
  return { code, stdout: normalized(stdout), stderr: normalized(stderr) };
}

/** Runs a command that must succeed and returns its output. */
async function ok(args: string[]): Promise<string> {
  const outcome = await cli(args);
  expect(outcome.stderr).toBe("");
  expect(outcome.code).toBe(0);
  return outcome.stdout;
}

/** Creates a task with `--json` and returns its real id. */
async function created(args: string[]): Promise<string> {
  const outcome = await cli(["tasks", "create", "--json", ...args]);
  expect(outcome.code, outcome.stderr).toBe(0);
  const id = [...ids.entries()].find(([, name]) => outcome.stdout.includes(`"id": "${name}"`));
  expect(id).toBeDefined();
  return id?.[0] ?? "";
}

describe("punctual tasks", () => {
  it("creates a task from flags and prints it with its DST warnings", async () => {
    const out = await ok([
      "tasks",
      "create",
      "--title",
      "night report",
      "--cron",
      "30 2 * * *",
      "--tz",
      "America/New_York",
    ]);
    expect(out).toMatchInlineSnapshot(`
      "id                   id-1................................
      owner                alice
      title                night report
      description          null
      schedule             {"type":"cron","cron":"30 2 * * *","timezone":"America/New_York"}
      target               {"kind":"handler","name":"log","input":null}
      context              {"mode":"fresh_thread_per_run","thread_id":null}
      options              {"overlap":"skip","catch_up":{"window":"PT1H","policy":"latest"},"late_after":"PT1M","retry":{"max_attempts":1,"initial":"PT10S","max_delay":"PT10M"},"run_timeout":"PT1H","queue_timeout":"PT24H"}
      metadata             {}
      webhook_secret       null
      status               enabled
      next_run_at          2026-03-08T07:00:00Z  (2026-03-08 08:00:00 GMT+1)
      decided_through      2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      last_run_at          null
      last_run_id          null
      last_error           null
      run_count            0
      admitted_count       0
      version              1
      created_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      warning: In America/New_York, on 2026-03-08 clocks jump from 02:00 to 03:00: the fire at 02:30 does not exist and runs at 03:00 (2026-03-08T07:00:00Z) instead.
      "
    `);
  });

  it("prints the API's JSON with --json", async () => {
    const out = await ok([
      "tasks",
      "create",
      "--json",
      "--title",
      "hourly",
      "--every",
      "PT1H",
      "--handler",
      "log",
      "--input",
      '{"to":"team"}',
    ]);
    expect(out).toMatchInlineSnapshot(`
      "{
        "task": {
          "id": "id-2................................",
          "owner": "alice",
          "key": null,
          "group": null,
          "title": "hourly",
          "description": null,
          "schedule": {
            "type": "interval",
            "every": "PT1H"
          },
          "target": {
            "kind": "handler",
            "name": "log",
            "input": {
              "to": "team"
            }
          },
          "context": {
            "mode": "fresh_thread_per_run",
            "thread_id": null
          },
          "options": {
            "overlap": "skip",
            "catch_up": {
              "window": "PT1H",
              "policy": "latest"
            },
            "late_after": "PT1M",
            "retry": {
              "max_attempts": 1,
              "initial": "PT10S",
              "max_delay": "PT10M"
            },
            "run_timeout": "PT1H",
            "queue_timeout": "PT24H"
          },
          "metadata": {},
          "webhook_secret": null,
          "status": "enabled",
          "next_run_at": "2026-03-07T13:00:00Z",
          "decided_through": "2026-03-07T12:00:00Z",
          "last_run_at": null,
          "last_run_id": null,
          "last_error": null,
          "run_count": 0,
          "admitted_count": 0,
          "version": 1,
          "created_at": "2026-03-07T12:00:00Z",
          "updated_at": "2026-03-07T12:00:00Z",
          "defect": null
        },
        "warnings": [],
        "replayed": false
      }
      "
    `);
  });

  it("reads a whole task from --body @FILE, the flags winning over it", async () => {
    const file = join(dir, "task.json");
    writeFileSync(
      file,
      JSON.stringify({
        title: "from a file",
        schedule: { type: "once", run_at: "2026-03-09T09:00:00", timezone: "Europe/Berlin" },
        target: { kind: "handler", name: "log" },
        metadata: { team: "ops" },
      }),
    );
    const out = await ok(["tasks", "create", "--body", `@${file}`, "--title", "overridden"]);
    expect(out).toMatchInlineSnapshot(`
      "id                   id-3................................
      owner                alice
      title                overridden
      description          null
      schedule             {"type":"once","run_at":"2026-03-09T09:00:00","timezone":"Europe/Berlin"}
      target               {"kind":"handler","name":"log","input":null}
      context              {"mode":"fresh_thread_per_run","thread_id":null}
      options              {"overlap":"skip","catch_up":{"window":"PT1H","policy":"latest"},"late_after":"PT1M","retry":{"max_attempts":1,"initial":"PT10S","max_delay":"PT10M"},"run_timeout":"PT1H","queue_timeout":"PT24H"}
      metadata             {"team":"ops"}
      webhook_secret       null
      status               enabled
      next_run_at          2026-03-09T08:00:00Z  (2026-03-09 09:00:00 GMT+1)
      decided_through      2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      last_run_at          null
      last_run_id          null
      last_error           null
      run_count            0
      admitted_count       0
      version              1
      created_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      "
    `);
  });

  it.each([
    [["tasks", "create", "--cron", "* * * * *"], "--title is required"],
    [["tasks", "create", "--title", "x"], "one of --cron, --every, --at, --rrule is required"],
    [["tasks", "create", "--title", "x", "--cron", "* * * * *", "--every", "PT1M"], "give one of"],
    [["tasks", "create", "--body", "{not json"], "--body must be a JSON object"],
    [["tasks", "create", "--body", "[1]"], "--body must be a JSON object"],
    [["tasks", "create", "--body", "@/nonexistent/task.json"], "cannot read"],
    [["tasks", "create", "--title", "x", "--cron", "* * * * *", "--input", "{"], "--input must"],
    [["tasks", "edit", "some-id"], "nothing to change"],
    [["tasks", "list", "--limit", "ten"], "--limit must be a whole number"],
    [["tasks", "preview", "some-id", "--count", "-1"], "--count must be a whole number"],
  ])("refuses %j as a usage error (exit 2)", async (args, message) => {
    const outcome = await cli(args);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toContain(message);
  });

  it("exits 2 with the problem's fields when the API refuses the request as invalid", async () => {
    const outcome = await cli(["tasks", "create", "--title", "bad", "--cron", "61 * * * *"]);
    expect(outcome).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: The request is invalid (422): schedule.cron: minute field: 61 is out of range 0-59
      ",
        "stdout": "",
      }
    `);
    const stale = await cli(["tasks", "list", "--limit", "500"]);
    expect(stale).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: A limit is exceeded (422): limit must be at most 200
      ",
        "stdout": "",
      }
    `);
  });

  it("exits 1 for a task that does not exist, without a token, and when the server is unreachable", async () => {
    expect(await cli(["tasks", "show", "no-such-task"])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Not found (404): task no-such-task not found
      ",
        "stdout": "",
      }
    `);
    expect(await cli(["tasks", "list"], { PUNCTUAL_TOKEN: "" })).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Missing or invalid bearer token (401): send Authorization: Bearer <token> (give a token with --token or PUNCTUAL_TOKEN; punctual token create makes one)
      ",
        "stdout": "",
      }
    `);
    const port = await closedPort();
    const down = await cli(["tasks", "list", "--server", `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(1);
    expect(down.stdout).toBe("");
    expect(down.stderr.replace(String(port), "PORT")).toMatch(
      /^punctual: cannot reach http:\/\/127\.0\.0\.1:PORT: .+ \(is `punctual serve` running\? set --server or PUNCTUAL_URL\)\n$/,
    );
  });

  it("lists tasks as a table, by pages and filtered", async () => {
    expect(await ok(["tasks", "list"])).toMatchInlineSnapshot(`
      "ID                                    STATUS   TITLE         SCHEDULE                            NEXT RUN                   LAST ERROR
      id-1................................  enabled  night report  cron "30 2 * * *" America/New_York  2026-03-08 08:00:00 GMT+1
      id-2................................  enabled  hourly        every PT1H                          2026-03-07 14:00:00 GMT+1
      id-3................................  enabled  overridden    once 2026-03-09T09:00:00            2026-03-09 09:00:00 GMT+1
      "
    `);
    expect(await ok(["tasks", "list", "--limit", "1"])).toMatchInlineSnapshot(`
      "ID                                    STATUS   TITLE         SCHEDULE                            NEXT RUN                   LAST ERROR
      id-1................................  enabled  night report  cron "30 2 * * *" America/New_York  2026-03-08 08:00:00 GMT+1
      next page: --cursor <cursor>
      "
    `);
    const page = JSON.parse(await ok(["tasks", "list", "--limit", "2", "--json"])) as {
      next_cursor: string;
    };
    expect(await ok(["tasks", "list", "--limit", "2", "--cursor", page.next_cursor])).toContain(
      "overridden",
    );
    expect(await ok(["tasks", "list", "--status", "paused"])).toMatchInlineSnapshot(`
      "ID  STATUS  TITLE  SCHEDULE  NEXT RUN  LAST ERROR
      "
    `);
  });

  it("shows, edits (with the read ETag), pauses, resumes and cancels a task", async () => {
    const id = await created(["--title", "lifecycle", "--every", "PT5M"]);
    expect(await ok(["tasks", "show", id])).toMatchInlineSnapshot(`
      "id                   id-4................................
      owner                alice
      title                lifecycle
      description          null
      schedule             {"type":"interval","every":"PT5M"}
      target               {"kind":"handler","name":"log","input":null}
      context              {"mode":"fresh_thread_per_run","thread_id":null}
      options              {"overlap":"skip","catch_up":{"window":"PT1H","policy":"latest"},"late_after":"PT1M","retry":{"max_attempts":1,"initial":"PT10S","max_delay":"PT10M"},"run_timeout":"PT1H","queue_timeout":"PT24H"}
      metadata             {}
      webhook_secret       null
      status               enabled
      next_run_at          2026-03-07T12:05:00Z  (2026-03-07 13:05:00 GMT+1)
      decided_through      2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      last_run_at          null
      last_run_id          null
      last_error           null
      run_count            0
      admitted_count       0
      version              1
      created_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      "
    `);
    expect(await ok(["tasks", "edit", id, "--title", "renamed", "--every", "PT10M"]))
      .toMatchInlineSnapshot(`
      "id                   id-4................................
      owner                alice
      title                renamed
      description          null
      schedule             {"type":"interval","every":"PT10M"}
      target               {"kind":"handler","name":"log","input":null}
      context              {"mode":"fresh_thread_per_run","thread_id":null}
      options              {"overlap":"skip","catch_up":{"window":"PT1H","policy":"latest"},"late_after":"PT1M","retry":{"max_attempts":1,"initial":"PT10S","max_delay":"PT10M"},"run_timeout":"PT1H","queue_timeout":"PT24H"}
      metadata             {}
      webhook_secret       null
      status               enabled
      next_run_at          2026-03-07T12:10:00Z  (2026-03-07 13:10:00 GMT+1)
      decided_through      2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      last_run_at          null
      last_run_id          null
      last_error           null
      run_count            0
      admitted_count       0
      version              2
      created_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      "
    `);
    expect(await ok(["tasks", "pause", id, "--cancel-running"])).toContain("paused");
    expect(await ok(["tasks", "resume", id, "--catch-up", "none"])).toContain("enabled");
    expect(await ok(["tasks", "cancel", id])).toMatchInlineSnapshot(`
      "id                   id-4................................
      owner                alice
      title                renamed
      description          null
      schedule             {"type":"interval","every":"PT10M"}
      target               {"kind":"handler","name":"log","input":null}
      context              {"mode":"fresh_thread_per_run","thread_id":null}
      options              {"overlap":"skip","catch_up":{"window":"PT1H","policy":"latest"},"late_after":"PT1M","retry":{"max_attempts":1,"initial":"PT10S","max_delay":"PT10M"},"run_timeout":"PT1H","queue_timeout":"PT24H"}
      metadata             {}
      webhook_secret       null
      status               cancelled
      next_run_at          null
      decided_through      2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      last_run_at          null
      last_run_id          null
      last_error           null
      run_count            0
      admitted_count       0
      version              2
      created_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      "
    `);
    expect(await cli(["tasks", "resume", id])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Not allowed in this status (409): a task cannot move from cancelled to enabled
      ",
        "stdout": "",
      }
    `);
  });

  it("previews the next fires with what DST does to them", async () => {
    const id = await created([
      "--title",
      "dst",
      "--cron",
      "30 2 * * *",
      "--tz",
      "America/New_York",
    ]);
    expect(await ok(["tasks", "preview", id, "--count", "3"])).toMatchInlineSnapshot(`
      "UTC                   WALL TIME            OFFSET  LOCAL                      DST
      2026-03-08T07:00:00Z  2026-03-08 03:00:00  -04:00  2026-03-08 08:00:00 GMT+1  02:30:00 does not exist; fired at 03:00:00
      2026-03-09T06:30:00Z  2026-03-09 02:30:00  -04:00  2026-03-09 07:30:00 GMT+1
      2026-03-10T06:30:00Z  2026-03-10 02:30:00  -04:00  2026-03-10 07:30:00 GMT+1
      "
    `);
    expect(await cli(["tasks", "preview", id, "--count", "0"])).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: The request is invalid (422): count: must be an integer from 1 to 100
      ",
        "stdout": "",
      }
    `);
  });

  it("explains why a task did or did not fire", async () => {
    const id = await created(["--title", "explained", "--cron", "0 9 * * *"]);
    expect(await ok(["tasks", "explain", id, "--at", "2026-03-08T09:00:00Z"]))
      .toMatchInlineSnapshot(`
      "not_yet_decided: The occurrence of 2026-03-08 09:00:00 +00:00 is in the future: it will be decided when it comes due.
      occurrence: 2026-03-08 09:00:00 +00:00, 2026-03-08 10:00:00 GMT+1
      next occurrence: 2026-03-09 09:00:00 +00:00, 2026-03-09 10:00:00 GMT+1
      "
    `);
    expect(await cli(["tasks", "explain", id, "--at", "yesterday"])).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: The request is invalid (422): at: "yesterday" is not an ISO-8601 date and time such as 2026-12-01T09:00:00Z
      ",
        "stdout": "",
      }
    `);
  });

  it("triggers once per idempotency key, backfills, and deletes with --force", async () => {
    const id = await created(["--title", "manual", "--cron", "0 6 * * *"]);
    const first = await ok(["tasks", "trigger", id, "--idempotency-key", "k-1"]);
    expect(first).toMatchInlineSnapshot(`
      "id                   id-8................................
      task_id              id-7................................
      owner                alice
      trigger              manual
      scheduled_for        2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      fire_at              2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      status               queued
      reason               null
      missed_count         null
      missed_until         null
      attempt              0
      failures             0
      not_before           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      thread_scope         handler:alice
      thread_id            id-8................................
      exclusive            true
      claim_expires_at     null
      target_run_id        null
      idempotency_key      punctual:id-7................................:manual:k-1
      queued_at            2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      launched_at          null
      deadline_at          null
      finished_at          null
      lateness_ms          null
      late                 false
      cancel_requested_at  null
      error                null
      result               null
      moved_from           null
      "
    `);
    // A repeat says it is one, and shows the run as it is now, not as the first answer had it.
    expect(await ok(["tasks", "trigger", id, "--idempotency-key", "k-1"])).toBe(
      "replayed: this --idempotency-key was used before; no new run. That run as it is now:\n" +
        first,
    );
    const replayed = JSON.parse(
      await ok(["tasks", "trigger", id, "--idempotency-key", "k-1", "--json"]),
    ) as { replayed: boolean; status: string };
    expect(replayed).toMatchObject({ replayed: true, status: "queued" });
    expect(
      await ok([
        "tasks",
        "backfill",
        id,
        "--from",
        "2026-03-05T00:00:00Z",
        "--to",
        "2026-03-07T00:00:00Z",
      ]),
    ).toMatchInlineSnapshot(`
      "ID                                    TRIGGER   STATUS  SCHEDULED FOR              LATENESS  REASON / ERROR
      id-9................................  backfill  queued  2026-03-05 07:00:00 GMT+1
      id-10...............................  backfill  queued  2026-03-06 07:00:00 GMT+1
      2 queued, 0 already backfilled
      "
    `);
    expect(
      await ok([
        "tasks",
        "backfill",
        id,
        "--from",
        "2026-03-05T00:00:00Z",
        "--to",
        "2026-03-07T00:00:00Z",
      ]),
    ).toMatchInlineSnapshot(`
      "ID  TRIGGER  STATUS  SCHEDULED FOR  LATENESS  REASON / ERROR
      0 queued, 2 already backfilled
      "
    `);
    expect(await ok(["tasks", "delete", id, "--force"])).toMatchInlineSnapshot(`
      "deleted id-7................................
      "
    `);
    expect((await cli(["tasks", "show", id])).code).toBe(1);
  });
});

describe("punctual runs", () => {
  it("lists a task's runs, shows one and cancels it once", async () => {
    const id = await created([
      "--body",
      JSON.stringify({ options: { overlap: "allow_all" } }),
      "--title",
      "runs",
      "--cron",
      "0 7 * * *",
    ]);
    const run = JSON.parse(await ok(["tasks", "trigger", id, "--json"])) as { id: string };
    await ok(["tasks", "trigger", id]);
    expect(await ok(["runs", "list", id])).toMatchInlineSnapshot(`
      "ID                                    TRIGGER  STATUS  SCHEDULED FOR              LATENESS  REASON / ERROR
      id-14...............................  manual   queued  2026-03-07 13:00:00 GMT+1
      id-12...............................  manual   queued  2026-03-07 13:00:00 GMT+1
      "
    `);
    expect(await ok(["runs", "list", id, "--trigger", "manual", "--limit", "1"]))
      .toMatchInlineSnapshot(`
      "ID                                    TRIGGER  STATUS  SCHEDULED FOR              LATENESS  REASON / ERROR
      id-14...............................  manual   queued  2026-03-07 13:00:00 GMT+1
      next page: --cursor <cursor>
      "
    `);
    expect(await ok(["runs", "list", id, "--status", "succeeded"])).toMatchInlineSnapshot(`
      "ID  TRIGGER  STATUS  SCHEDULED FOR  LATENESS  REASON / ERROR
      "
    `);
    const runId = [...ids.entries()].find(([, name]) => name === run.id)?.[0] ?? "";
    expect(await ok(["runs", "show", runId])).toMatchInlineSnapshot(`
      "id                   id-12...............................
      task_id              id-11...............................
      owner                alice
      trigger              manual
      scheduled_for        2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      fire_at              2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      status               queued
      reason               null
      missed_count         null
      missed_until         null
      attempt              0
      failures             0
      not_before           2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      thread_scope         handler:alice
      thread_id            id-12...............................
      exclusive            false
      claim_expires_at     null
      target_run_id        null
      idempotency_key      punctual:id-11...............................:manual:id-13...............................
      queued_at            2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      launched_at          null
      deadline_at          null
      finished_at          null
      lateness_ms          null
      late                 false
      cancel_requested_at  null
      error                null
      result               null
      moved_from           null
      "
    `);
    expect(await ok(["runs", "cancel", runId, "--json"])).toContain('"status": "cancelled"');
    expect(await cli(["runs", "cancel", runId])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Not allowed in this status (409): a run cannot move from cancelled to cancelled
      ",
        "stdout": "",
      }
    `);
    expect(await cli(["runs", "show", "no-such-run"])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Not found (404): run no-such-run not found
      ",
        "stdout": "",
      }
    `);
  });
});

describe("punctual tasks create --webhook", () => {
  it("makes a webhook target from --webhook and --input", async () => {
    const out = await ok([
      "tasks",
      "create",
      "--title",
      "hook",
      "--at",
      "2026-03-08T10:00:00",
      "--tz",
      "Europe/Berlin",
      "--webhook",
      "https://example.com/hook",
      "--input",
      "[1,2]",
    ]);
    expect(out).toContain(
      'target               {"kind":"webhook","url":"https://example.com/hook","method":"POST","headers":{},"input":[1,2],"cancel_url":null,"idempotent":false,"signature":"punctual"}\n',
    );
    expect(out).toMatch(/\nwebhook_secret {7}\S+\n/);
  });
});

describe("punctual tasks with several rules and days to skip", () => {
  it("creates a task from several --cron and --exclude, and previews the rule and the exclusions", async () => {
    const out = await ok([
      "tasks",
      "create",
      "--title",
      "two rules",
      "--cron",
      "0 9 * * 1-5",
      "--cron",
      "0 10 * * sat",
      "--tz",
      "Europe/Berlin",
      "--exclude",
      "2026-03-09",
      "--exclude",
      "2026-03-11..2026-03-13",
      "--exclude",
      "days:* * sun",
    ]);
    expect(out.split("\n")[4]).toMatchInlineSnapshot(
      `"schedule             {"type":"cron","cron":["0 9 * * 1-5","0 10 * * sat"],"timezone":"Europe/Berlin","exclude":["2026-03-09",{"from":"2026-03-11","to":"2026-03-13"},{"days":"* * sun"}]}"`,
    );
    const id = [...ids.entries()].find(([, name]) => out.includes(name))?.[0] ?? "";
    expect(await ok(["tasks", "preview", id, "--count", "4"])).toMatchInlineSnapshot(`
      "UTC                   WALL TIME            OFFSET  LOCAL                      RULE          DST
        not fired: 2026-03-09 09:00:00 (excluded: the date 2026-03-09)
      2026-03-10T08:00:00Z  2026-03-10 09:00:00  +01:00  2026-03-10 09:00:00 GMT+1  0 9 * * 1-5
        not fired: 3 wall times from 2026-03-11 09:00:00 to 2026-03-13 09:00:00 (excluded: the dates 2026-03-11 to 2026-03-13)
      2026-03-14T09:00:00Z  2026-03-14 10:00:00  +01:00  2026-03-14 10:00:00 GMT+1  0 10 * * sat
      2026-03-16T08:00:00Z  2026-03-16 09:00:00  +01:00  2026-03-16 09:00:00 GMT+1  0 9 * * 1-5
      2026-03-17T08:00:00Z  2026-03-17 09:00:00  +01:00  2026-03-17 09:00:00 GMT+1  0 9 * * 1-5
      "
    `);
    const json = JSON.parse(await ok(["tasks", "preview", id, "--count", "1", "--json"])) as {
      occurrences: { rule: string; suppressed_before: unknown[] }[];
    };
    expect(json.occurrences[0]?.rule).toBe("0 9 * * 1-5");
  });

  it("edits only what the flags name: --exclude and --no-exclude keep the rules and the zone", async () => {
    const id = await created([
      "--title",
      "edited",
      "--cron",
      "0 9 * * 1-5",
      "--tz",
      "Europe/Berlin",
      "--exclude",
      "2026-03-09",
    ]);
    const schedule = async () =>
      (await ok(["tasks", "show", id])).split("\n").find((l) => l.startsWith("schedule"));
    await ok(["calendars", "put", "team-days", "2026-03-10"]);
    await ok(["tasks", "edit", id, "--exclude", "calendar:team-days", "--exclude", "* * fri"]);
    expect(await schedule()).toMatchInlineSnapshot(
      `"schedule             {"type":"cron","cron":"0 9 * * 1-5","timezone":"Europe/Berlin","exclude":[{"calendar":"team-days"},{"days":"* * fri"}]}"`,
    );
    await ok(["tasks", "edit", id, "--cron", "0 8 * * *", "--cron", "0 12 * * sat"]);
    expect(await schedule()).toMatchInlineSnapshot(
      `"schedule             {"type":"cron","cron":["0 8 * * *","0 12 * * sat"],"timezone":"Europe/Berlin","exclude":[{"calendar":"team-days"},{"days":"* * fri"}]}"`,
    );
    await ok(["tasks", "edit", id, "--no-exclude", "--tz", "UTC"]);
    expect(await schedule()).toMatchInlineSnapshot(
      `"schedule             {"type":"cron","cron":["0 8 * * *","0 12 * * sat"],"timezone":"UTC"}"`,
    );
  });

  it.each([
    [
      [
        "tasks",
        "create",
        "--title",
        "x",
        "--at",
        "2026-03-09T09:00:00Z",
        "--exclude",
        "2026-03-09",
      ],
      "--exclude applies to --cron, --every and --rrule",
    ],
    [
      ["tasks", "create", "--title", "x", "--tz", "UTC"],
      "--tz, --exclude and --on-excluded change a schedule",
    ],
    [["tasks", "create", "--title", "x", "--cron", "0 9 * * *", "--every", "PT1H"], "give one of"],
    [
      ["calendars", "put", "empty"],
      "give the calendar's items, or --file, or --holidays, or --empty",
    ],
    [["calendars", "put", "x", "--holidays", "DE", "--empty"], "--empty puts no items"],
    [
      ["calendars", "put", "x", "2026-12-24", "--holiday-years", "2026"],
      "--holiday-years goes with",
    ],
    [["calendars", "put", "x", "--holidays", "DE", "--holiday-years", "26"], "takes a year"],
    [["calendars", "put", "x", "--file", "/nonexistent/items.json"], "cannot read the items"],
  ])("refuses %j as a usage error (exit 2)", async (args, message) => {
    const outcome = await cli(args);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toContain(message);
  });

  it("exits 2 naming the --exclude item the API refuses", async () => {
    const outcome = await cli([
      "tasks",
      "create",
      "--title",
      "bad",
      "--cron",
      "0 9 * * *",
      "--exclude",
      "2026-02-30",
      "--exclude",
      "calendar:nope",
    ]);
    expect(outcome).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: The request is invalid (422): schedule.exclude.0: "2026-02-30" is not a real date; schedule.exclude.1.calendar: no calendar named "nope"
      ",
        "stdout": "",
      }
    `);
  });
});

describe("punctual calendars", () => {
  it("puts a calendar from items and a file, gets and lists it", async () => {
    const file = join(dir, "holidays.json");
    writeFileSync(file, JSON.stringify(["2026-12-25", { from: "2026-12-31", to: "2027-01-01" }]));
    expect(await ok(["calendars", "put", "holidays", "--file", file, "days:1 5 *", "2026-10-03"]))
      .toMatchInlineSnapshot(`
      "name             holidays
      version          1
      created_at       2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at       2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      tasks_refreshed  0
      items            4
        2026-12-25
        2026-12-31..2027-01-01
        days:1 5 *
        2026-10-03
      "
    `);
    expect(await ok(["calendars", "get", "holidays"])).toMatchInlineSnapshot(`
      "name             holidays
      version          1
      created_at       2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      updated_at       2026-03-07T12:00:00Z  (2026-03-07 13:00:00 GMT+1)
      items            4
        2026-12-25
        2026-12-31..2027-01-01
        days:1 5 *
        2026-10-03
      "
    `);
    expect(await ok(["calendars", "list"])).toMatchInlineSnapshot(`
      "NAME       VERSION  UPDATED                    ITEMS
      holidays   1        2026-03-07 13:00:00 GMT+1  4: 2026-12-25, 2026-12-31..2027-01-01, days:1 5 *, +1 more
      team-days  1        2026-03-07 13:00:00 GMT+1  1: 2026-03-10
      "
    `);
    expect(await ok(["calendars", "list", "--limit", "1"])).toContain(
      "holidays  1        2026-03-07 13:00:00 GMT+1  4: 2026-12-25, 2026-12-31..2027-01-01, days:1 5 *, +1 more\nnext page: --cursor <cursor>\n",
    );
    const page = JSON.parse(await ok(["calendars", "list", "--limit", "1", "--json"])) as {
      next_cursor: string;
    };
    const rest = await ok(["calendars", "list", "--limit", "1", "--cursor", page.next_cursor]);
    expect(rest).toContain("team-days");
    expect(rest).not.toContain("next page");
    expect((await cli(["calendars", "list", "--limit", "many"])).code).toBe(2);
    const again = join(dir, "again.json");
    writeFileSync(again, await ok(["calendars", "get", "holidays", "--json"]));
    expect(await ok(["calendars", "put", "holidays", "--file", again])).toContain(
      "version          1",
    );
    expect(await ok(["calendars", "put", "holidays", "--empty", "--json"])).toContain(
      '"items": []',
    );
  });

  it("refuses a bad item (exit 2) and a calendar in use, naming the task (exit 1)", async () => {
    expect(await cli(["calendars", "put", "bad", "2026-02-30", "calendar:other"]))
      .toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "punctual: The request is invalid (422): items.0: "2026-02-30" is not a real date; items.1: a calendar cannot name another calendar
      ",
        "stdout": "",
      }
    `);
    await ok(["calendars", "put", "in-use", "2026-03-10"]);
    const id = await created([
      "--title",
      "uses in-use",
      "--cron",
      "0 9 * * *",
      "--exclude",
      "calendar:in-use",
    ]);
    expect(await cli(["calendars", "delete", "in-use"])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: A task uses this calendar (409): calendar "in-use" is used by task id-19............................... ("uses in-use"): remove it from that task's exclude (and any other's) first
      ",
        "stdout": "",
      }
    `);
    // Every day excluded: the task will not fire, and the put says so.
    expect(await ok(["calendars", "put", "in-use", "days:* * *"])).toContain(
      `\nwarning: Task ${id} ("uses in-use"): It will not fire again while its exclusions stand: `.replace(
        id,
        [...ids.entries()].find(([real]) => real === id)?.[1] ?? id,
      ),
    );
    await ok(["tasks", "delete", id]);
    expect(await ok(["calendars", "delete", "in-use"])).toBe("deleted calendar in-use\n");
    expect(await cli(["calendars", "get", "in-use"])).toMatchInlineSnapshot(`
      {
        "code": 1,
        "stderr": "punctual: Not found (404): calendar in-use not found
      ",
        "stdout": "",
      }
    `);
  });

  it("puts a region's public holidays for the years asked (--holidays, --holiday-years)", async () => {
    const out = await ok([
      "calendars",
      "put",
      "bavaria",
      "2026-12-24",
      "--holidays",
      "de-by",
      "--holiday-years",
      "2026..2027",
    ]);
    expect(out).toContain("items            25\n");
    expect(out).toContain("  2026-01-06\n");
    expect(out).toContain("  2027-12-26\n");
    const refused = await cli(["calendars", "put", "x", "--holidays", "DE-ZZ"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('holidays.region: no public holidays are known for "DE-ZZ"');
  }, 30_000);
});

describe("punctual runs across tasks", () => {
  it("lists runs of every task with repeated --status and --since, and retries a cancelled run", async () => {
    const first = await created(["--title", "first", "--cron", "0 7 * * *"]);
    const second = await created(["--title", "second", "--cron", "0 8 * * *"]);
    const a = JSON.parse(await ok(["tasks", "trigger", first, "--json"])) as { id: string };
    const b = JSON.parse(await ok(["tasks", "trigger", second, "--json"])) as { id: string };
    const realId = (name: string): string =>
      [...ids.entries()].find(([, n]) => n === name)?.[0] ?? "";
    await ok(["runs", "cancel", realId(b.id)]);
    const listed = JSON.parse(
      await ok([
        "runs",
        "list",
        "--status",
        "queued",
        "--status",
        "cancelled",
        "--since",
        "2026-03-07T11:00:00Z",
        "--json",
      ]),
    ) as { items: { id: string; status: string }[] };
    expect(listed.items.map((r) => [r.id, r.status])).toEqual(
      expect.arrayContaining([
        [a.id, "queued"],
        [b.id, "cancelled"],
      ]),
    );
    const human = await ok(["runs", "list", "--status", "cancelled", "--task", second]);
    expect(human.split("\n")[0]).toMatch(/^TASK +RUN +TRIGGER +STATUS/);
    expect(human).toContain(b.id);
    const retried = await ok(["runs", "retry", realId(b.id), "--json"]);
    expect(retried).toContain('"status": "queued"');
    const refused = await cli(["runs", "retry", realId(a.id)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("still active");
    expect((await cli(["runs", "list", "--since", "yesterday"])).code).toBe(2);
    expect((await cli(["runs", "list", "--status", "broken"])).code).toBe(2);
  });

  it("reads --since as a span back from now or an instant", () => {
    const now = Date.parse("2026-03-07T12:00:00Z");
    const usage = (message: string) => new Error(message);
    expect(instantFlag("since", "1h", now, usage)).toBe("2026-03-07T11:00:00.000Z");
    expect(instantFlag("since", "90s", now, usage)).toBe("2026-03-07T11:58:30.000Z");
    expect(instantFlag("since", "2d", now, usage)).toBe("2026-03-05T12:00:00.000Z");
    expect(instantFlag("since", "PT30M", now, usage)).toBe("2026-03-07T11:30:00.000Z");
    expect(instantFlag("since", "2026-01-01T00:00:00Z", now, usage)).toBe("2026-01-01T00:00:00Z");
    expect(() => instantFlag("since", "soon", now, usage)).toThrow(/--since/);
  });
});

// Last in the file: the snapshots above name the ids the tasks before them were given.
describe("punctual tasks delete --after-run", () => {
  it("deletes the task", async () => {
    const id = await created(["--title", "after", "--cron", "0 6 * * *"]);
    expect(await ok(["tasks", "delete", id, "--after-run"])).toMatch(/^deleted /);
    expect((await cli(["tasks", "show", id])).code).toBe(1);
  });
});
