/**
 * `punctual runs list`: runs across the caller's tasks with the filters of `GET /v1/runs` (docs/api.md),
 * or, given a task id, that task's runs as before. `--since 1h` and the other time flags take a span
 * back from now (`90s`, `15m`, `1h`, `2d`, `1w`, or ISO 8601 `PT1H`) or an RFC 3339 instant.
 */
import type { Command } from "commander";
import type { RunSearchQuery } from "../application/runs/find-runs.js";
import type { PageView, RunView } from "../application/shapes/view-mappers.js";
import type { RunStatus, RunTrigger } from "../domain/run.js";
import { parseDuration } from "../domain/schedule/iso-text.js";
import type { PunctualClient } from "../client/punctual-client.js";
import { scheduledText } from "./api-output.js";
import { collect } from "./schedule-flags.js";
import { table } from "./text-table.js";

export interface RunListFlags {
  readonly status?: string[];
  readonly task?: string;
  readonly targetKind?: string;
  readonly trigger?: string;
  readonly late?: boolean;
  readonly since?: string;
  readonly until?: string;
  readonly finishedSince?: string;
  readonly finishedUntil?: string;
  readonly limit?: string;
  readonly cursor?: string;
}

/**
 * The instant a time flag names: a span back from `now` as RFC 3339, or the text itself (an instant,
 * checked by the server).
 * @throws the usage error `usage` makes, for a span that cannot be read
 */
export function instantFlag(
  flag: string,
  text: string | undefined,
  now: number,
  usage: (message: string) => Error,
): string | undefined {
  if (text === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) return text;
  // A span in the one duration syntax (docs/semantics.md#durations): 90s, 1h30m, 2d, PT1H.
  const parsed = /^\d+$/.test(text) ? null : parseDuration(text, 0, { wholeSeconds: false });
  if (parsed?.ok === true) return new Date(now - parsed.value).toISOString();
  if (parsed !== null && /^P/i.test(text)) throw usage(`--${flag}: ${parsed.problem}`);
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) return text;
  throw usage(
    `--${flag} takes a span back from now (90s, 15m, 1h30m, 2d, PT1H) or an RFC 3339 instant`,
  );
}

/** The query `GET /v1/runs` is asked with. */
export function runSearchQueryOf(
  flags: RunListFlags,
  now: number,
  usage: (message: string) => Error,
  limit: number | undefined,
): RunSearchQuery {
  return {
    status: flags.status as RunSearchQuery["status"],
    task_id: flags.task,
    target_kind: flags.targetKind as RunSearchQuery["target_kind"],
    trigger: flags.trigger as RunSearchQuery["trigger"],
    late: flags.late,
    scheduled_after: instantFlag("since", flags.since, now, usage),
    scheduled_before: instantFlag("until", flags.until, now, usage),
    finished_after: instantFlag("finished-since", flags.finishedSince, now, usage),
    finished_before: instantFlag("finished-until", flags.finishedUntil, now, usage),
    limit,
    cursor: flags.cursor,
  };
}

/** Runs of several tasks: the task column first. */
export function runRowsAcrossTasks(items: readonly RunView[], timeZone?: string): string {
  return table(
    ["TASK", "RUN", "TRIGGER", "STATUS", "SCHEDULED FOR", "ATTEMPT", "REASON / ERROR"],
    items.map((r) => [
      r.task_id,
      r.id,
      r.trigger,
      r.status,
      scheduledText(r, timeZone),
      String(r.attempt),
      (r.reason ?? r.error ?? "").slice(0, 50),
    ]),
  );
}

/** The flags of `runs list`, on `command`. */
export function withRunListFlags(command: Command): Command {
  return command
    .argument("[task-id]", "only this task's runs (the task's own listing: --status and --trigger)")
    .option(
      "--status <status>",
      "queued, launching, running, succeeded, failed, timed_out, cancelled, skipped or missed (repeatable)",
      collect,
    )
    .option("--task <id>", "only this task's runs")
    .option("--target-kind <kind>", "agent, webhook or handler")
    .option("--trigger <trigger>", "scheduled, manual or backfill")
    .option("--late", "only runs launched late")
    .option("--no-late", "only runs launched on time")
    .option(
      "--since <when>",
      "scheduled at or after: a span back from now (1h, 30m, 2d) or an instant",
    )
    .option("--until <when>", "scheduled before: a span back from now or an instant")
    .option("--finished-since <when>", "ended runs finished at or after (a span or an instant)")
    .option("--finished-until <when>", "ended runs finished before (a span or an instant)")
    .option("--limit <n>", "page size (1-200)")
    .option("--cursor <cursor>", "next page");
}

/** Lists with the flags: across tasks, or (a task id given) the task's own listing. */
export function listRuns(
  client: PunctualClient,
  flags: RunListFlags,
  taskId: string | undefined,
  options: { readonly limit: number | undefined; readonly usage: (message: string) => Error },
): Promise<PageView<RunView>> {
  if (taskId !== undefined && taskId !== "") {
    const [status, more] = flags.status ?? [];
    if (more !== undefined)
      throw options.usage("a task's own listing takes one --status; use --task");
    return client.tasks.runs(taskId, {
      status: status as RunStatus | undefined,
      trigger: flags.trigger as RunTrigger | undefined,
      limit: options.limit,
      cursor: flags.cursor,
    });
  }
  return client.runs.list(runSearchQueryOf(flags, Date.now(), options.usage, options.limit));
}
