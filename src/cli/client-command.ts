/**
 * `punctual tasks ...`, `punctual runs ...` and `punctual calendars ...` (calendar-command.ts): the API
 * through `punctual/client`. Human output by default (times in the viewer's zone; `api-output.ts`),
 * `--json` for scripts. Exit codes: 0 ok, 1 failure, 2 a request refused as invalid or a usage error.
 */
import { Command, CommanderError } from "commander";
import type { TaskCreateInput, TaskPatchInput } from "../application/shapes/task-input.js";
import type { PreviewView } from "../application/shapes/view-schemas.js";
import type { PageView, RunView, TaskView } from "../application/shapes/view-mappers.js";
import { PunctualApiError, PunctualConnectionError } from "../client/client-errors.js";
import { PunctualClient } from "../client/punctual-client.js";
import {
  detail,
  explanationText,
  occurrenceRows,
  pageText,
  problemText,
  runRows,
  taskRows,
} from "./api-output.js";
import { applyCommand } from "./apply-command.js";
import { calendarCommand } from "./calendar-command.js";
import { listRuns, runRowsAcrossTasks, withRunListFlags } from "./run-list-command.js";
import type { RunListFlags } from "./run-list-command.js";
import { taskBody, withTaskFlags } from "./task-flags.js";
import type { TaskFlags } from "./task-flags.js";

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

const GLOBAL_FLAGS: ReadonlySet<string> = new Set(["server", "token", "json"]);

function clientOf(options: GlobalOptions, io: ClientIo): PunctualClient {
  return new PunctualClient({
    baseUrl: options.server ?? io.env["PUNCTUAL_URL"] ?? "http://127.0.0.1:8080",
    token: options.token ?? io.env["PUNCTUAL_TOKEN"],
  });
}

function usage(io: ClientIo, message: string): CommanderError {
  io.stderr(`punctual: ${message}\n`);
  return new CommanderError(2, "punctual.invalidInput", message);
}

/** A whole-number flag (`--limit`, `--count`); its range is the API's to check. */
function wholeNumber(flag: string, text: string | undefined, io: ClientIo): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw usage(io, `--${flag} must be a whole number`);
  return Number(text);
}

/**
 * What the user wrote (`--body`, the flags): the server checks it, and its refusal is a usage error
 * (exit 2) naming each field, so the CLI passes it on as the client's input type, unchecked.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the input type asked for
function checkedByServer<T>(value: object): T {
  return value as T;
}

/** Builds `tasks`, `runs` and `calendars`; each action prints JSON or a human view. */
export function clientCommands(io: ClientIo = processIo): Command[] {
  const zone = io.timeZone;
  const globals = (command: Command): Command =>
    command
      .option("--server <url>", "the API (default: $PUNCTUAL_URL, else http://127.0.0.1:8080)")
      .option("--token <token>", "bearer token (default: $PUNCTUAL_TOKEN)")
      .option("--json", "print the API's JSON")
      .exitOverride();

  /** Runs `fn` and prints its answer; API refusals become exit codes 2 or 1. */
  const act =
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- each command's options type
    <O, A>(
        fn: (client: PunctualClient, options: O, args: string[]) => Promise<A>,
        human: (answer: A) => string,
      ) =>
      async (...args: unknown[]): Promise<void> => {
        const options = args[args.length - 2] as O & GlobalOptions;
        const positional = args.slice(0, -2) as string[];
        try {
          const answer = await fn(clientOf(options, io), options, positional);
          io.stdout(options.json === true ? `${JSON.stringify(answer, null, 2)}\n` : human(answer));
        } catch (error) {
          if (error instanceof PunctualApiError) {
            const message =
              error.status === 401
                ? `${problemText(error)} (give a token with --token or PUNCTUAL_TOKEN; punctual token create makes one)`
                : problemText(error);
            // 400, 422 and 428: the request itself was refused as invalid (docs/errors.md).
            if ([400, 422, 428].includes(error.status)) throw usage(io, message);
            throw new Error(message, { cause: error });
          }
          if (error instanceof PunctualConnectionError) {
            throw new Error(
              `${error.message} (is \`punctual serve\` running? set --server or PUNCTUAL_URL)`,
              { cause: error },
            );
          }
          throw error;
        }
      };

  const tasks = new Command("tasks").description("manage tasks through the HTTP API");
  const sub = (name: string, description: string) =>
    globals(tasks.command(name).description(description));
  const showTask = (task: TaskView) => detail(task, zone);
  const showRun = (run: RunView) => detail(run, zone);

  withTaskFlags(sub("create", "create a task"))
    .option("--idempotency-key <key>", "a retry-safe key")
    .action(
      act(
        (c, opts: TaskFlags & { idempotencyKey?: string }) =>
          c.tasks.create(
            checkedByServer<TaskCreateInput>(taskBody(opts, (message) => usage(io, message), true)),
            {
              idempotency_key: opts.idempotencyKey,
            },
          ),
        ({ task, warnings, replayed }) =>
          (replayed
            ? "replayed: this --idempotency-key was used before; no new task. The first answer:\n"
            : "") +
          detail(task, zone) +
          warnings.map((w) => `warning: ${w}\n`).join(""),
      ),
    );
  sub("list", "list tasks")
    .option("--status <status>", "enabled, paused, completed, failed or cancelled")
    .option("--key <key>", "only the task with this key")
    .option("--group <name>", "only the tasks of this declared-schedules group")
    .option("--limit <n>", "page size (1-200)")
    .option("--cursor <cursor>", "next page")
    .action(
      act(
        (
          c,
          opts: { status?: string; key?: string; group?: string; limit?: string; cursor?: string },
        ) =>
          c.tasks.list(
            checkedByServer({
              status: opts.status,
              key: opts.key,
              group: opts.group,
              limit: wholeNumber("limit", opts.limit, io),
              cursor: opts.cursor,
            }),
          ),
        (page) => pageText(page, taskRows, zone),
      ),
    );
  sub("show", "show a task")
    .argument("<id>")
    .action(act((c, _opts: unknown, [id = ""]) => c.tasks.get(id), showTask));
  withTaskFlags(sub("edit", "edit a task (reads its version, then PATCHes with If-Match)"))
    .option("--no-exclude", "drop the schedule's days to skip")
    .argument("<id>")
    .action(
      act(
        async (c, opts: TaskFlags, [id = ""]) => {
          const given = Object.entries(opts).some(
            ([key, value]) => !GLOBAL_FLAGS.has(key) && value !== undefined,
          );
          if (!given) throw usage(io, "nothing to change");
          const current = await c.tasks.get(id);
          const body = taskBody(opts, (message) => usage(io, message), false, current.schedule);
          if (Object.keys(body).length === 0) throw usage(io, "nothing to change");
          return c.tasks.update(id, checkedByServer<TaskPatchInput>(body), {
            version: current.version,
          });
        },
        ({ task }) => detail(task, zone),
      ),
    );
  sub("pause", "pause a task")
    .argument("<id>")
    .option("--cancel-running", "also cancel a launched run")
    .action(
      act(
        (c, opts: { cancelRunning?: boolean }, [id = ""]) =>
          c.tasks.pause(id, { cancel_running: opts.cancelRunning ?? false }),
        showTask,
      ),
    );
  sub("resume", "resume a task")
    .argument("<id>")
    .option("--catch-up <policy>", "none, latest or all (default none)")
    .action(
      act(
        (c, opts: { catchUp?: string }, [id = ""]) =>
          c.tasks.resume(id, checkedByServer({ catch_up: opts.catchUp })),
        showTask,
      ),
    );
  sub("cancel", "cancel a task (terminal)")
    .argument("<id>")
    .action(act((c, _opts: unknown, [id = ""]) => c.tasks.cancel(id), showTask));
  sub("trigger", "run a task now")
    .argument("<id>")
    .option("--idempotency-key <key>", "a retry-safe key")
    .action(
      act(
        async (c, opts: { idempotencyKey?: string }, [id = ""]) => {
          const run = await c.tasks.trigger(id, { idempotency_key: opts.idempotencyKey });
          // A replay answers the run as it was when first queued: show it as it is now.
          return run.replayed ? { ...(await c.runs.get(run.id)), replayed: true } : run;
        },
        ({ replayed, ...run }) =>
          (replayed
            ? "replayed: this --idempotency-key was used before; no new run. That run as it is now:\n"
            : "") + showRun(run),
      ),
    );
  sub("backfill", "replay nominal times in [from, to)")
    .argument("<id>")
    .requiredOption("--from <instant>")
    .requiredOption("--to <instant>")
    .action(
      act(
        (c, opts: { from: string; to: string }, [id = ""]) =>
          c.tasks.backfill(id, { from: opts.from, to: opts.to }),
        ({ runs, already_backfilled }) =>
          runRows(runs, zone) + `${runs.length} queued, ${already_backfilled} already backfilled\n`,
      ),
    );
  sub("delete", "delete a task")
    .argument("<id>")
    .option("--force", "cancel a launching or running run")
    .option("--after-run", "let a launching or running run finish; the task goes when it ends")
    .action(
      act(
        async (c, opts: { force?: boolean; afterRun?: boolean }, [id = ""]) => {
          await c.tasks.delete(id, {
            force: opts.force === true,
            afterRun: opts.afterRun === true,
          });
          return { deleted: id };
        },
        ({ deleted }) => `deleted ${deleted}\n`,
      ),
    );
  sub("preview", "the next fires, with DST notes")
    .argument("<id>")
    .option("--count <n>", "how many (1-100)")
    .action(
      act(
        async (c, opts: { count?: string; json?: boolean }, [id = ""]) => {
          const count = wholeNumber("count", opts.count, io);
          if (opts.json === true) return c.tasks.preview(id, count);
          // A person also sees which expression each fire comes from, when the task has several.
          const [preview, task] = await Promise.all([c.tasks.preview(id, count), c.tasks.get(id)]);
          const several = task.schedule.type === "cron" && Array.isArray(task.schedule.cron);
          return { ...preview, severalRules: several };
        },
        (answer: PreviewView & { severalRules?: boolean }) =>
          occurrenceRows(answer.occurrences, zone, answer.severalRules),
      ),
    );
  sub("explain", "why a task did or did not fire around an instant")
    .argument("<id>")
    .requiredOption(
      "--at <instant>",
      "the RFC 3339 instant to explain (2026-03-29T01:30:00Z): the fires around it and what became of each",
    )
    .action(
      act(
        (c, opts: { at: string }, [id = ""]) => c.tasks.explain(id, opts.at),
        (explanation) => explanationText(explanation, zone),
      ),
    );

  const runs = new Command("runs").description(
    "list, read, cancel and retry runs through the HTTP API",
  );
  const runSub = (name: string, description: string) =>
    globals(runs.command(name).description(description));
  withRunListFlags(
    runSub("list", "runs across your tasks, newest first, or one task's runs"),
  ).action((...args: unknown[]) => {
    // A task's own listing keeps its rows; runs across tasks name their task first.
    const oneTask = typeof args[0] === "string" && args[0] !== "";
    return act(
      (c, opts: RunListFlags, [id]) =>
        listRuns(c, opts, id, {
          limit: wholeNumber("limit", opts.limit, io),
          usage: (message) => usage(io, message),
        }),
      (page: PageView<RunView>) => pageText(page, oneTask ? runRows : runRowsAcrossTasks, zone),
    )(...args);
  });
  runSub("show", "show a run")
    .argument("<id>")
    .action(act((c, _opts: unknown, [id = ""]) => c.runs.get(id), showRun));
  runSub("cancel", "cancel a run")
    .argument("<id>")
    .action(act((c, _opts: unknown, [id = ""]) => c.runs.cancel(id), showRun));
  runSub("retry", "redrive a failed, timed-out or cancelled run: queued again as its next attempt")
    .argument("<id>")
    .action(act((c, _opts: unknown, [id = ""]) => c.runs.retry(id), showRun));
  const kit = { globals, act, usage: (message: string) => usage(io, message), timeZone: zone };
  return [tasks, runs, calendarCommand(kit), applyCommand(kit)];
}
