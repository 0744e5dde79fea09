/**
 * `punctual tasks ...` and `punctual runs ...` (SPEC 7.3): a client of the HTTP API. Human tables by
 * default (times in the viewer's zone), `--json` for scripts. Exit codes: 0 ok, 1 failure, 2 a request
 * refused as invalid or a usage error.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ApiError, callApi } from "./api-client.js";
import type { ApiConnection } from "./api-client.js";
import { table } from "./token-command.js";

export interface ClientIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The viewer's time zone for human output. */
  readonly timeZone?: string;
}

const processIo: ClientIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

interface GlobalOptions {
  readonly server?: string;
  readonly token?: string;
  readonly json?: boolean;
}

type Json = Record<string, unknown>;

function connectionOf(options: GlobalOptions, io: ClientIo): ApiConnection {
  return {
    server: options.server ?? io.env["PUNCTUAL_URL"] ?? "http://127.0.0.1:8080",
    token: options.token ?? io.env["PUNCTUAL_TOKEN"],
  };
}

function usage(io: ClientIo, message: string): CommanderError {
  io.stderr(`punctual: ${message}\n`);
  return new CommanderError(2, "punctual.invalidInput", message);
}

/** An instant in the viewer's zone: `2026-03-09 09:00:00 +01:00`-like, from an RFC 3339 string. */
export function localTime(value: unknown, timeZone?: string): string {
  if (typeof value !== "string") return "-";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const parts = new Intl.DateTimeFormat("en-CA", {
    ...(timeZone === undefined ? {} : { timeZone }),
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "shortOffset",
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}:${get("second")} ${get("timeZoneName")}`;
}

/** A JSON value as text: strings as they are, null as empty, the rest as JSON. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return JSON.stringify(value);
}

function scheduleText(schedule: unknown): string {
  const s = (schedule ?? {}) as Json;
  switch (s["type"]) {
    case "cron":
      return `cron "${String(s["cron"])}" ${textOf(s["timezone"] ?? "UTC")}`;
    case "once":
      return `once ${String(s["run_at"])}`;
    case "interval":
      return `every ${String(s["every"])}`;
    default:
      return JSON.stringify(schedule);
  }
}

function taskRows(items: readonly Json[], io: ClientIo): string {
  return table(
    ["ID", "STATUS", "TITLE", "SCHEDULE", "NEXT RUN", "LAST ERROR"],
    items.map((t) => [
      String(t["id"]),
      String(t["status"]),
      String(t["title"]).slice(0, 40),
      scheduleText(t["schedule"]),
      localTime(t["next_run_at"], io.timeZone),
      textOf(t["last_error"]).slice(0, 40),
    ]),
  );
}

function runRows(items: readonly Json[], io: ClientIo): string {
  return table(
    ["ID", "TRIGGER", "STATUS", "SCHEDULED FOR", "LATENESS", "REASON / ERROR"],
    items.map((r) => [
      String(r["id"]),
      String(r["trigger"]),
      String(r["status"]),
      localTime(r["scheduled_for"], io.timeZone),
      typeof r["lateness_ms"] === "number"
        ? `${(r["lateness_ms"] / 1000).toFixed(1)}s${r["late"] === true ? " late" : ""}`
        : "",
      textOf(r["reason"] ?? r["error"]).slice(0, 50),
    ]),
  );
}

function detail(object: Json, io: ClientIo): string {
  const lines = Object.entries(object).map(([key, value]) => {
    const text =
      typeof value === "string" && /^\d{4}-\d\d-\d\dT.*Z$/.test(value)
        ? `${value}  (${localTime(value, io.timeZone)})`
        : typeof value === "object" && value !== null
          ? JSON.stringify(value)
          : String(value);
    return `${key.padEnd(20)} ${text}`;
  });
  return `${lines.join("\n")}\n`;
}

function occurrenceRows(items: readonly Json[], io: ClientIo): string {
  return table(
    ["UTC", "WALL TIME", "OFFSET", "LOCAL", "DST"],
    items.map((o) => {
      const note = o["note"] as Json | null;
      return [
        String(o["at"]),
        String(o["wall"]).replace("T", " "),
        String(o["offset"]),
        localTime(o["at"], io.timeZone),
        note === null
          ? ""
          : note["kind"] === "gap_shifted"
            ? `${String(note["nominal_wall"]).slice(11)} does not exist; fired at the transition`
            : note["kind"] === "overlap_first"
              ? "repeated wall time, first pass"
              : "repeated wall time, second pass",
      ];
    }),
  );
}

/** `explain`'s answer for a person: the verdict and its sentence, then the occurrences and the run. */
function explanationText(explanation: Json, io: ClientIo): string {
  const lines = [`${String(explanation["verdict"])}: ${String(explanation["message"])}`];
  const occurrence = (label: string, value: unknown): void => {
    if (value === null || typeof value !== "object") return;
    const o = value as Json;
    const note = (o["dst_note"] ?? null) as Json | null;
    const dst =
      note === null
        ? ""
        : note["kind"] === "gap_shifted"
          ? ` (${String(note["nominal_wall"]).slice(11)} did not exist; fired at the transition)`
          : note["kind"] === "overlap_first"
            ? " (repeated wall time, first pass)"
            : " (repeated wall time, second pass)";
    lines.push(
      `${label}: ${String(o["local_wall"]).replace("T", " ")} ${String(o["offset"])}, ` +
        `${localTime(o["scheduled_for"], io.timeZone)}${dst}`,
    );
  };
  occurrence("occurrence", explanation["occurrence"]);
  occurrence("next occurrence", explanation["next_occurrence"]);
  const run = explanation["run"];
  if (run !== null && typeof run === "object") lines.push("", runRows([run as Json], io).trimEnd());
  return `${lines.join("\n")}\n`;
}

/** Parses `--body` text (JSON, `@file`, or `@-` is not supported: use a file). */
function bodyFrom(text: string, io: ClientIo): Json {
  let raw = text;
  if (text.startsWith("@")) {
    try {
      raw = readFileSync(text.slice(1), "utf8");
    } catch (error) {
      throw usage(io, `cannot read ${text.slice(1)}: ${(error as Error).message}`);
    }
  }
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error("not an object");
    return value as Json;
  } catch (error) {
    throw usage(io, `--body must be a JSON object: ${(error as Error).message}`);
  }
}

interface TaskFlags {
  readonly body?: string;
  readonly title?: string;
  readonly cron?: string;
  readonly tz?: string;
  readonly every?: string;
  readonly at?: string;
  readonly handler?: string;
  readonly webhook?: string;
  readonly input?: string;
}

/** A task body from `--body` and the shortcut flags (flags win). */
function taskBody(flags: TaskFlags, io: ClientIo, creating: boolean): Json {
  const body: Json = flags.body === undefined ? {} : bodyFrom(flags.body, io);
  if (flags.title !== undefined) body["title"] = flags.title;
  const kinds = [flags.cron, flags.every, flags.at].filter((v) => v !== undefined).length;
  if (kinds > 1) throw usage(io, "give one of --cron, --every, --at");
  if (flags.cron !== undefined) {
    body["schedule"] = {
      type: "cron",
      cron: flags.cron,
      ...(flags.tz === undefined ? {} : { timezone: flags.tz }),
    };
  } else if (flags.every !== undefined) {
    body["schedule"] = { type: "interval", every: flags.every };
  } else if (flags.at !== undefined) {
    body["schedule"] = {
      type: "once",
      run_at: flags.at,
      ...(flags.tz === undefined ? {} : { timezone: flags.tz }),
    };
  }
  let input: unknown;
  if (flags.input !== undefined) {
    try {
      input = JSON.parse(flags.input);
    } catch {
      throw usage(io, "--input must be JSON");
    }
  }
  if (flags.handler !== undefined) {
    body["target"] = {
      kind: "handler",
      name: flags.handler,
      ...(input === undefined ? {} : { input }),
    };
  } else if (flags.webhook !== undefined) {
    body["target"] = {
      kind: "webhook",
      url: flags.webhook,
      ...(input === undefined ? {} : { input }),
    };
  }
  if (creating) {
    if (body["title"] === undefined) throw usage(io, "--title is required (or give --body)");
    if (body["schedule"] === undefined) throw usage(io, "one of --cron, --every, --at is required");
    body["target"] ??= { kind: "handler", name: "log", ...(input === undefined ? {} : { input }) };
  }
  return body;
}

function withTaskFlags(command: Command): Command {
  return command
    .option("--body <json>", "the whole task as JSON, or @FILE")
    .option("--title <text>", "title")
    .option("--cron <expr>", "a cron schedule")
    .option("--tz <zone>", "IANA time zone of --cron or --at")
    .option("--every <duration>", "an interval schedule, e.g. PT5M")
    .option("--at <instant>", "a once schedule")
    .option("--handler <name>", "a handler target (default for create: log)")
    .option("--webhook <url>", "a webhook target")
    .option("--input <json>", "the target's input");
}

function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) search.set(key, value);
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

function segment(id: string): string {
  return encodeURIComponent(id);
}

/** Builds `tasks` and `runs`; each action prints JSON or a human view. */
export function clientCommands(io: ClientIo = processIo): Command[] {
  const globals = (command: Command): Command =>
    command
      .option("--server <url>", "the API (default: $PUNCTUAL_URL, else http://127.0.0.1:8080)")
      .option("--token <token>", "bearer token (default: $PUNCTUAL_TOKEN)")
      .option("--json", "print the API's JSON")
      .exitOverride();

  /** Runs `fn` and prints its answer; API refusals become exit codes 2 or 1. */
  const act =
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- each command's options type
    <O>(
        fn: (connection: ApiConnection, options: O, args: string[]) => Promise<unknown>,
        human: (body: unknown) => string,
      ) =>
      async (...args: unknown[]): Promise<void> => {
        const options = args[args.length - 2] as O & GlobalOptions;
        const positional = args.slice(0, -2) as string[];
        try {
          const body = await fn(connectionOf(options, io), options, positional);
          io.stdout(options.json === true ? `${JSON.stringify(body, null, 2)}\n` : human(body));
        } catch (error) {
          if (error instanceof ApiError) {
            if (error.exitCode === 2) throw usage(io, error.message);
            throw new Error(error.message, { cause: error });
          }
          throw error;
        }
      };

  const tasks = new Command("tasks").description("manage tasks through the HTTP API");
  const sub = (name: string, description: string) =>
    globals(tasks.command(name).description(description));
  const showTask = (b: unknown) => detail(b as Json, io);
  const showRun = (b: unknown) => detail(b as Json, io);

  withTaskFlags(sub("create", "create a task"))
    .option("--idempotency-key <key>", "a retry-safe key")
    .action(
      act(
        async (c, opts: TaskFlags & { idempotencyKey?: string }) => {
          const body = taskBody(opts, io, true);
          const answer = await callApi(c, "POST", "/v1/tasks", {
            body,
            ...(opts.idempotencyKey === undefined
              ? {}
              : { headers: { "idempotency-key": opts.idempotencyKey } }),
          });
          return answer.body;
        },
        (b) => {
          const { task, warnings } = b as { task: Json; warnings: string[] };
          return detail(task, io) + warnings.map((w) => `warning: ${w}\n`).join("");
        },
      ),
    );
  sub("list", "list tasks")
    .option("--status <status>", "enabled, paused, completed, failed or cancelled")
    .option("--limit <n>", "page size (1-200)")
    .option("--cursor <cursor>", "next page")
    .action(
      act(
        async (c, opts: { status?: string; limit?: string; cursor?: string }) =>
          (
            await callApi(
              c,
              "GET",
              `/v1/tasks${query({ status: opts.status, limit: opts.limit, cursor: opts.cursor })}`,
            )
          ).body,
        (b) => {
          const page = b as { items: Json[]; next_cursor: string | null };
          return (
            taskRows(page.items, io) +
            (page.next_cursor === null ? "" : `next page: --cursor ${page.next_cursor}\n`)
          );
        },
      ),
    );
  sub("show", "show a task")
    .argument("<id>")
    .action(
      act(
        async (c, _opts: unknown, [id = ""]) =>
          (await callApi(c, "GET", `/v1/tasks/${segment(id)}`)).body,
        showTask,
      ),
    );
  withTaskFlags(sub("edit", "edit a task (reads its version, then PATCHes with If-Match)"))
    .argument("<id>")
    .action(
      act(
        async (c, opts: TaskFlags, [id = ""]) => {
          const body = taskBody(opts, io, false);
          if (Object.keys(body).length === 0) throw usage(io, "nothing to change");
          const current = await callApi(c, "GET", `/v1/tasks/${segment(id)}`);
          const etag = current.headers.get("etag") ?? "*";
          return (
            await callApi(c, "PATCH", `/v1/tasks/${segment(id)}`, {
              body,
              headers: { "if-match": etag },
            })
          ).body;
        },
        (b) => detail((b as { task: Json }).task, io),
      ),
    );
  sub("pause", "pause a task")
    .argument("<id>")
    .option("--cancel-running", "also cancel a launched run")
    .action(
      act(
        async (c, opts: { cancelRunning?: boolean }, [id = ""]) =>
          (
            await callApi(c, "POST", `/v1/tasks/${segment(id)}/pause`, {
              body: { cancel_running: opts.cancelRunning ?? false },
            })
          ).body,
        showTask,
      ),
    );
  sub("resume", "resume a task")
    .argument("<id>")
    .option("--catch-up <policy>", "none, latest or all (default none)")
    .action(
      act(
        async (c, opts: { catchUp?: string }, [id = ""]) =>
          (
            await callApi(c, "POST", `/v1/tasks/${segment(id)}/resume`, {
              body: opts.catchUp === undefined ? {} : { catch_up: opts.catchUp },
            })
          ).body,
        showTask,
      ),
    );
  sub("cancel", "cancel a task (terminal)")
    .argument("<id>")
    .action(
      act(
        async (c, _opts: unknown, [id = ""]) =>
          (await callApi(c, "POST", `/v1/tasks/${segment(id)}/cancel`)).body,
        showTask,
      ),
    );
  sub("trigger", "run a task now")
    .argument("<id>")
    .option("--idempotency-key <key>", "a retry-safe key")
    .action(
      act(
        async (c, opts: { idempotencyKey?: string }, [id = ""]) =>
          (
            await callApi(
              c,
              "POST",
              `/v1/tasks/${segment(id)}/trigger`,
              opts.idempotencyKey === undefined
                ? {}
                : { headers: { "idempotency-key": opts.idempotencyKey } },
            )
          ).body,
        showRun,
      ),
    );
  sub("backfill", "replay nominal times in [from, to)")
    .argument("<id>")
    .requiredOption("--from <instant>")
    .requiredOption("--to <instant>")
    .action(
      act(
        async (c, opts: { from: string; to: string }, [id = ""]) =>
          (
            await callApi(c, "POST", `/v1/tasks/${segment(id)}/backfill`, {
              body: { from: opts.from, to: opts.to },
            })
          ).body,
        (b) => {
          const r = b as { runs: Json[]; already_backfilled: number };
          return (
            runRows(r.runs, io) +
            `${r.runs.length} queued, ${r.already_backfilled} already backfilled\n`
          );
        },
      ),
    );
  sub("delete", "delete a task")
    .argument("<id>")
    .option("--force", "cancel a launching or running run")
    .action(
      act(
        async (c, opts: { force?: boolean }, [id = ""]) => {
          await callApi(
            c,
            "DELETE",
            `/v1/tasks/${segment(id)}${query({ force: opts.force === true ? "true" : undefined })}`,
          );
          return { deleted: id };
        },
        (b) => `deleted ${String((b as Json)["deleted"])}\n`,
      ),
    );
  sub("preview", "the next fires, with DST notes")
    .argument("<id>")
    .option("--count <n>", "how many (1-100)")
    .action(
      act(
        async (c, opts: { count?: string }, [id = ""]) =>
          (
            await callApi(
              c,
              "GET",
              `/v1/tasks/${segment(id)}/preview${query({ count: opts.count })}`,
            )
          ).body,
        (b) => occurrenceRows((b as { occurrences: Json[] }).occurrences, io),
      ),
    );
  sub("explain", "why a task did or did not fire around an instant")
    .argument("<id>")
    .requiredOption("--at <instant>")
    .action(
      act(
        async (c, opts: { at: string }, [id = ""]) =>
          (await callApi(c, "GET", `/v1/tasks/${segment(id)}/explain${query({ at: opts.at })}`))
            .body,
        (b) => explanationText(b as Json, io),
      ),
    );

  const runs = new Command("runs").description("read and cancel runs through the HTTP API");
  const runSub = (name: string, description: string) =>
    globals(runs.command(name).description(description));
  runSub("list", "a task's runs, newest first")
    .argument("<task-id>")
    .option("--status <status>", "filter by status")
    .option("--trigger <trigger>", "scheduled, manual or backfill")
    .option("--limit <n>", "page size (1-200)")
    .option("--cursor <cursor>", "next page")
    .action(
      act(
        async (
          c,
          opts: { status?: string; trigger?: string; limit?: string; cursor?: string },
          [id = ""],
        ) =>
          (
            await callApi(
              c,
              "GET",
              `/v1/tasks/${segment(id)}/runs${query({ status: opts.status, trigger: opts.trigger, limit: opts.limit, cursor: opts.cursor })}`,
            )
          ).body,
        (b) => {
          const page = b as { items: Json[]; next_cursor: string | null };
          return (
            runRows(page.items, io) +
            (page.next_cursor === null ? "" : `next page: --cursor ${page.next_cursor}\n`)
          );
        },
      ),
    );
  runSub("show", "show a run")
    .argument("<id>")
    .action(
      act(
        async (c, _opts: unknown, [id = ""]) =>
          (await callApi(c, "GET", `/v1/runs/${segment(id)}`)).body,
        showRun,
      ),
    );
  runSub("cancel", "cancel a run")
    .argument("<id>")
    .action(
      act(
        async (c, _opts: unknown, [id = ""]) =>
          (await callApi(c, "POST", `/v1/runs/${segment(id)}/cancel`)).body,
        showRun,
      ),
    );
  return [tasks, runs];
}
