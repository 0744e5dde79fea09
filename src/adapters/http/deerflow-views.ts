/**
 * DeerFlow's scheduled-task shapes (its `ScheduledTask` and `ScheduledTaskRun` views and its create and
 * update bodies) mapped to and from punctual's agent tasks, in one place. A DeerFlow task is an agent
 * task on the configured DeerFlow server whose input is one user message, the `prompt`; its schedule is
 * `cron` (5 fields; punctual's several expressions and days to skip as a documented deviation) or
 * `once`. Timestamps are RFC 3339 with `Z` (DeerFlow writes `+00:00`).
 */
import * as z from "zod";
import type { RunView, TaskView } from "../../application/shapes/view-mappers.js";
import { formatInstant } from "../../domain/schedule/civil-time.js";
import { parseSchedule } from "../../domain/schedule/parse-schedule.js";
import { instant } from "../../domain/time.js";

/** DeerFlow's thread ids (`deerflow/utils/thread_id.py`). */
export const DEERFLOW_THREAD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const CONTEXT_MODES = ["fresh_thread_per_run", "reuse_thread"] as const;

const threadId = z
  .string()
  .regex(DEERFLOW_THREAD_ID, "String should match pattern '^[A-Za-z0-9_-]{1,64}$'");

export const createBody = z.object({
  thread_id: threadId.nullish(),
  context_mode: z.string().default("fresh_thread_per_run"),
  title: z.string().min(1),
  prompt: z.string().min(1),
  schedule_type: z.string(),
  schedule_spec: z.record(z.string(), z.unknown()),
  timezone: z.string(),
});
export type CreateBody = z.output<typeof createBody>;

/** PATCH: every field optional; `null` means "not supplied" (DeerFlow's `exclude_none`). */
export const updateBody = z.object({
  context_mode: z.string().nullish(),
  thread_id: threadId.nullish(),
  title: z.string().min(1).nullish(),
  prompt: z.string().min(1).nullish(),
  schedule_spec: z.record(z.string(), z.unknown()).nullish(),
  timezone: z.string().nullish(),
});
export type UpdateBody = z.output<typeof updateBody>;

/** Where the server's DeerFlow tasks run: its name and the assistant (`lead_agent` by default). */
export interface DeerflowTarget {
  readonly server: string;
  readonly assistantId: string;
}

/** A refusal DeerFlow would answer the same way: status and its `detail`. */
export class DeerflowRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
  }
}

function invalid(detail: string): DeerflowRefusal {
  return new DeerflowRefusal(422, detail);
}

/** DeerFlow's own checks first (its messages): schedule type, cron arity, context mode. */
function checkedContextMode(mode: string): "fresh_thread_per_run" | "reuse_thread" {
  if (!(CONTEXT_MODES as readonly string[]).includes(mode)) {
    throw invalid(`Unsupported context_mode: ${mode}`);
  }
  return mode as "fresh_thread_per_run" | "reuse_thread";
}

/**
 * How `schedule_spec.cron` holds several expressions (a deviation: DeerFlow's holds one). No cron field
 * holds `|`, so a DeerFlow expression reads as itself.
 */
const RULE_SEPARATOR = " | ";

/** The expressions of `schedule_spec.cron`, blanks normalised; each must have DeerFlow's 5 fields. */
function cronRulesOf(cron: string): string | string[] {
  const rules = cron.split("|").map((rule) => rule.trim().split(/\s+/).join(" "));
  if (rules.some((rule) => rule.split(" ").length !== 5)) {
    throw invalid("Cron expression must contain exactly 5 fields");
  }
  return rules.length === 1 ? (rules[0] ?? "") : rules;
}

/** `schedule_spec.exclude` (a deviation: punctual's days to skip), passed on for punctual to check. */
function excludeOf(spec: Readonly<Record<string, unknown>>): { exclude?: unknown } {
  return spec["exclude"] === undefined || spec["exclude"] === null
    ? {}
    : { exclude: spec["exclude"] };
}

/** punctual's schedule input for a DeerFlow `schedule_type` / `schedule_spec` / `timezone`. */
function scheduleOf(type: string, spec: Readonly<Record<string, unknown>>, timezone?: string) {
  const zone = timezone === undefined ? {} : { timezone };
  switch (type) {
    case "cron": {
      const cron = spec["cron"];
      if (typeof cron !== "string") throw invalid("cron schedule requires schedule_spec.cron");
      return { type: "cron", cron: cronRulesOf(cron), ...zone, ...excludeOf(spec) };
    }
    case "once": {
      const runAt = spec["run_at"];
      if (typeof runAt !== "string") throw invalid("once schedule requires run_at");
      return { type: "once", run_at: wholeSecond(runAt), ...zone };
    }
    default:
      throw invalid(`Unsupported schedule_type: ${type}`);
  }
}

const FRACTION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d+)(.*)$/;

/**
 * `run_at` at a whole second: DeerFlow's clients send milliseconds (`toISOString()`), punctual keeps
 * whole seconds, so a fraction moves the instant up to the next second (docs/schedules.md).
 */
function wholeSecond(text: string): string {
  const match = FRACTION.exec(text.trim());
  if (match === null) return text;
  const [, wall = "", fraction = "", rest = ""] = match;
  if (/^0+$/.test(fraction)) return `${wall}${rest}`;
  const next = new Date(Date.parse(`${wall}Z`) + 1000).toISOString().slice(0, 19);
  return `${next}${rest}`;
}

/** The agent input of a prompt: one user message, as DeerFlow's scheduler sends it. */
function inputOf(prompt: string) {
  return { messages: [{ role: "user", content: prompt }] };
}

/**
 * The punctual task a DeerFlow create body stands for. Its overlap is `buffer_one` and its queue timeout
 * one hour, as DeerFlow's durable queue (one follow-up run waits behind the active one).
 */
export function taskInputOf(body: CreateBody, target: DeerflowTarget): Record<string, unknown> {
  const mode = checkedContextMode(body.context_mode);
  const schedule = scheduleOf(body.schedule_type, body.schedule_spec, body.timezone);
  if (mode === "reuse_thread" && (body.thread_id ?? "") === "") {
    throw invalid("reuse_thread requires thread_id");
  }
  return {
    title: body.title,
    schedule,
    target: {
      kind: "agent",
      server: target.server,
      assistant_id: target.assistantId,
      input: inputOf(body.prompt),
    },
    context:
      mode === "reuse_thread"
        ? { mode, thread_id: body.thread_id }
        : { mode: "fresh_thread_per_run" },
    options: { overlap: "buffer_one", queue_timeout: "PT1H" },
  };
}

/**
 * The punctual patch a DeerFlow update stands for, given the task as it is: a schedule change keeps the
 * other half (spec or zone); a zone change on a once task keeps its instant; `fresh_thread_per_run`
 * unbinds the thread; a `thread_id` alone on a fresh-thread task is ignored, as DeerFlow does.
 */
export function taskPatchOf(
  body: UpdateBody,
  current: TaskView,
  target: DeerflowTarget,
): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (body.title != null) patch["title"] = body.title;
  if (body.prompt != null) {
    patch["target"] = {
      ...agentTargetOf(current),
      server: target.server,
      input: inputOf(body.prompt),
    };
  }
  const schedule: Record<string, unknown> = { ...current.schedule };
  const type = String(schedule["type"]);
  if (type === "cron" && (body.schedule_spec != null || body.timezone != null)) {
    // The expressions and the zone replace theirs; the days to skip and the bounds stay unless given.
    const next: Record<string, unknown> = { ...schedule };
    if (body.schedule_spec != null) Object.assign(next, scheduleOf(type, body.schedule_spec));
    if (body.timezone != null) next["timezone"] = body.timezone;
    patch["schedule"] = next;
  } else if (body.schedule_spec != null || body.timezone != null) {
    const spec = body.schedule_spec ?? specOf(current);
    const keepInstant = body.schedule_spec == null && type === "once";
    const next =
      keepInstant && current.next_run_at !== null ? { run_at: current.next_run_at } : spec;
    const zone =
      body.timezone ?? (typeof schedule["timezone"] === "string" ? schedule["timezone"] : "UTC");
    patch["schedule"] = scheduleOf(type, next, zone);
  }
  const mode =
    body.context_mode == null ? current.context.mode : checkedContextMode(body.context_mode);
  const thread = body.thread_id ?? current.context.thread_id;
  if (mode === "reuse_thread") {
    if (thread === null || thread === "") throw invalid("reuse_thread requires thread_id");
    if (body.context_mode != null || body.thread_id != null) {
      patch["context"] = { mode, thread_id: thread };
    }
  } else if (body.context_mode != null) {
    patch["context"] = { mode: "fresh_thread_per_run" };
  }
  return patch;
}

/** Whether a punctual task is one the DeerFlow API shows: an agent task on its server, cron or once. */
export function isDeerflowTask(task: TaskView, target: DeerflowTarget): boolean {
  const agent = agentTargetOf(task);
  const type = (task.schedule as { type?: unknown }).type;
  return agent?.["server"] === target.server && (type === "cron" || type === "once");
}

function agentTargetOf(task: TaskView): Record<string, unknown> | null {
  const t = task.target as Record<string, unknown>;
  return t["kind"] === "agent" ? t : null;
}

/**
 * DeerFlow's `schedule_spec` of a task: `{cron}` or `{run_at}`. A punctual schedule with several
 * expressions shows them joined by ` | ` in `cron` and listed in `rules`; one with days to skip shows
 * them in `exclude` (docs/targets.md#a-deerflow-compatible-api).
 */
function specOf(task: TaskView): Record<string, unknown> {
  const s = task.schedule;
  if (s.type !== "cron") return { run_at: s.type === "once" ? onceInstant(s) : null };
  const rules = typeof s.cron === "string" ? [s.cron] : s.cron;
  return {
    cron: rules.join(RULE_SEPARATOR),
    ...(rules.length > 1 ? { rules } : {}),
    ...(s.exclude === undefined ? {} : { exclude: s.exclude }),
  };
}

/**
 * A once task's `run_at` as an instant (DeerFlow stores and answers it with its offset, and its frontend
 * reads it as one): punctual keeps a `run_at` written without an offset as that wall time in the task's
 * zone, which a browser would read in its own zone.
 */
function onceInstant(schedule: { run_at: string; timezone?: string | undefined }): string {
  if (/(Z|[+-]\d{2}:?\d{2})$/i.test(schedule.run_at)) return schedule.run_at;
  try {
    const spec = parseSchedule(
      { type: "once", run_at: schedule.run_at, timezone: schedule.timezone ?? "UTC" },
      { referenceAt: instant(0), checkReachable: false },
    );
    return spec.type === "once" ? formatInstant(spec.runAt) : schedule.run_at;
  } catch {
    return schedule.run_at;
  }
}

/** The prompt of a task: its last user message's text (tasks made elsewhere: their input as JSON). */
function promptOf(task: TaskView): string {
  const input = agentTargetOf(task)?.["input"];
  const messages = (input as { messages?: unknown } | null)?.messages;
  if (Array.isArray(messages)) {
    for (const message of [...(messages as unknown[])].reverse()) {
      const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
      if ((role === "user" || role === "human") && typeof content === "string") return content;
    }
  }
  return input === undefined || input === null ? "" : JSON.stringify(input);
}

/** What DeerFlow's `last_run_id` and `last_thread_id` name: the agent run and thread of the last run. */
export interface LastRun {
  readonly runId: string | null;
  readonly threadId: string | null;
}

/** DeerFlow's `ScheduledTask` view of a punctual task (its frontend type, field for field). */
export function scheduledTaskView(task: TaskView, last: LastRun) {
  const schedule: Record<string, unknown> = { ...task.schedule };
  return {
    id: task.id,
    thread_id: task.context.thread_id,
    context_mode: task.context.mode,
    title: task.title,
    prompt: promptOf(task),
    schedule_type: schedule["type"],
    schedule_spec: specOf(task),
    timezone: schedule["timezone"] ?? "UTC",
    status: task.status,
    next_run_at: task.next_run_at,
    last_run_at: task.last_run_at,
    last_run_id: last.runId,
    last_thread_id: last.threadId,
    last_error: task.last_error,
    run_count: task.run_count,
    created_at: task.created_at,
    updated_at: task.updated_at,
  };
}

/** DeerFlow's run statuses for punctual's (it has no `timed_out` or `missed`; `cancelled` is `interrupted`). */
const RUN_STATUS: Readonly<Record<string, string>> = {
  queued: "queued",
  launching: "launching",
  running: "running",
  succeeded: "success",
  failed: "failed",
  timed_out: "failed",
  cancelled: "interrupted",
  skipped: "skipped",
  missed: "skipped",
};

/** DeerFlow's `ScheduledTaskRun` view of a punctual run. */
export function scheduledTaskRunView(run: RunView) {
  return {
    id: run.id,
    task_id: run.task_id,
    thread_id: run.thread_id,
    run_id: run.target_run_id,
    scheduled_for: run.scheduled_for,
    trigger: run.trigger === "scheduled" ? "scheduled" : "manual",
    status: RUN_STATUS[run.status] ?? run.status,
    error: run.error,
    started_at: run.launched_at,
    finished_at: run.finished_at,
    created_at: run.queued_at,
    attempt_count: run.attempt,
  };
}
