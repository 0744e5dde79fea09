/**
 * LangGraph's cron shapes (the SDK's `Cron` and its create, update, search and count bodies) mapped to
 * and from punctual's agent tasks, in one place (docs/targets.md#langgraph-crons). A cron is an agent task
 * on the configured LangGraph server with a `cron` schedule: a thread cron reuses its thread, a stateless
 * cron runs each occurrence on a fresh thread (deleted after the run unless `on_run_completed: "keep"`);
 * `multitask_strategy` is punctual's overlap policy; `end_time` the schedule's `end_at`.
 */
import * as z from "zod";
import type { TaskView } from "../../application/shapes/view-mappers.js";

/** The server the routes serve. */
export interface LangGraphTarget {
  readonly server: string;
}

/** A refusal answered as LangGraph's servers answer: status and `{"detail": ...}`. */
export class LangGraphRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const MULTITASK = ["reject", "interrupt", "rollback", "enqueue"] as const;
type Multitask = (typeof MULTITASK)[number];
const jsonObject = z.record(z.string(), z.unknown());

/**
 * Run fields punctual does not send with its runs: a cron naming one is refused rather than run without
 * it. The `stream_*` fields only matter to a client joining the run's stream, so they are accepted.
 */
const UNSUPPORTED = [
  "webhook",
  "interrupt_before",
  "interrupt_after",
  "checkpoint_during",
  "durability",
] as const;

const payloadFields = {
  input: z.unknown().optional(),
  config: jsonObject.nullish(),
  context: jsonObject.nullish(),
  metadata: jsonObject.nullish(),
  on_run_completed: z.enum(["delete", "keep"]).nullish(),
  enabled: z.boolean().nullish(),
  timezone: z.string().min(1).nullish(),
  stream_mode: z.unknown().optional(),
  stream_subgraphs: z.unknown().optional(),
  stream_resumable: z.unknown().optional(),
  ...Object.fromEntries(UNSUPPORTED.map((field) => [field, z.unknown().optional()])),
};

export const cronCreateBody = z.object({
  assistant_id: z.string().min(1),
  schedule: z.string().min(1),
  end_time: z.string().nullish(),
  multitask_strategy: z.enum(MULTITASK).nullish(),
  ...payloadFields,
});
export type CronCreateBody = z.output<typeof cronCreateBody>;

/** PATCH: every field optional; `end_time: null` clears the end, other `null`s leave a field as it is. */
export const cronUpdateBody = z.object({
  schedule: z.string().min(1).nullish(),
  end_time: z.string().nullish(),
  ...payloadFields,
});
export type CronUpdateBody = z.output<typeof cronUpdateBody>;

const SORT_BY = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "created_at",
  "updated_at",
  "next_run_date",
] as const;
const SELECT = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "end_time",
  "schedule",
  "created_at",
  "updated_at",
  "user_id",
  "payload",
  "next_run_date",
  "metadata",
  "now",
  "timezone",
  "enabled",
  "on_run_completed",
] as const;

export const cronCountBody = z.object({
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  metadata: jsonObject.nullish(),
});

export const cronSearchBody = cronCountBody.extend({
  enabled: z.boolean().nullish(),
  limit: z.int().min(1).max(1000).default(10),
  offset: z.int().min(0).default(0),
  sort_by: z.enum(SORT_BY).nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
  select: z.array(z.enum(SELECT)).nullish(),
});
export type CronSearchBody = z.output<typeof cronSearchBody>;

/** punctual's overlap policy for a strategy: enqueue is the FIFO, reject skips, interrupt cancels. */
function overlapOf(strategy: Multitask): string {
  switch (strategy) {
    case "enqueue":
      return "buffer_all";
    case "reject":
      return "skip";
    case "interrupt":
      return "cancel_other";
    case "rollback":
      throw new LangGraphRefusal(
        422,
        "multitask_strategy rollback is not supported: punctual interrupts the active run (interrupt) but does not delete it",
      );
  }
}

/** The strategy a task's overlap policy stands for (null: `allow_all`, which has none). */
function multitaskOf(task: TaskView): Multitask | null {
  switch (task.options.overlap) {
    case "skip":
      return "reject";
    case "cancel_other":
      return "interrupt";
    case "allow_all":
      return null;
    default:
      return "enqueue";
  }
}

function refuseUnsupported(body: Readonly<Record<string, unknown>>): void {
  for (const field of UNSUPPORTED) {
    if (body[field] !== undefined && body[field] !== null) {
      throw new LangGraphRefusal(
        422,
        `${field} is not supported by punctual's crons; leave it out`,
      );
    }
  }
}

/** The punctual task a cron create stands for (`thread`: a thread cron's thread, else stateless). */
export function cronTaskInputOf(
  body: CronCreateBody,
  target: LangGraphTarget,
  thread: string | null,
): Record<string, unknown> {
  refuseUnsupported(body);
  if (thread !== null && body.on_run_completed != null) {
    throw new LangGraphRefusal(422, "on_run_completed applies to stateless crons only");
  }
  return {
    title: `LangGraph cron: ${body.assistant_id}`,
    schedule: {
      type: "cron",
      cron: body.schedule,
      timezone: body.timezone ?? "UTC",
      ...(body.end_time == null ? {} : { end_at: body.end_time }),
    },
    target: {
      kind: "agent",
      server: target.server,
      assistant_id: body.assistant_id,
      input: body.input ?? null,
      ...(body.config == null ? {} : { config: body.config }),
      ...(body.context == null ? {} : { context: body.context }),
      ...(body.metadata == null ? {} : { metadata: body.metadata }),
      ...(thread === null ? { on_run_completed: body.on_run_completed ?? "delete" } : {}),
    },
    context:
      thread === null
        ? { mode: "fresh_thread_per_run" }
        : { mode: "reuse_thread", thread_id: thread },
    options: { overlap: overlapOf(body.multitask_strategy ?? "enqueue") },
  };
}

/** The punctual patch a cron update stands for, given the task as it is (`enabled` is applied apart). */
export function cronTaskPatchOf(body: CronUpdateBody, current: TaskView): Record<string, unknown> {
  refuseUnsupported(body);
  const stateless = current.context.mode === "fresh_thread_per_run";
  if (!stateless && body.on_run_completed != null) {
    throw new LangGraphRefusal(422, "on_run_completed applies to stateless crons only");
  }
  const patch: Record<string, unknown> = {};
  if (body.schedule != null || body.timezone != null || body.end_time !== undefined) {
    const schedule: Record<string, unknown> = { ...current.schedule };
    if (body.schedule != null) schedule["cron"] = body.schedule;
    if (body.timezone != null) schedule["timezone"] = body.timezone;
    if (body.end_time !== undefined) schedule["end_at"] = body.end_time;
    patch["schedule"] = schedule;
  }
  const changes: Record<string, unknown> = {
    ...(body.input === undefined ? {} : { input: body.input }),
    ...(body.config == null ? {} : { config: body.config }),
    ...(body.context == null ? {} : { context: body.context }),
    ...(body.metadata == null ? {} : { metadata: body.metadata }),
    ...(body.on_run_completed == null ? {} : { on_run_completed: body.on_run_completed }),
  };
  if (Object.keys(changes).length > 0) patch["target"] = { ...current.target, ...changes };
  return patch;
}

/** Whether a punctual task is one the crons routes show: an agent task on the server, cron schedule. */
export function isCronTask(task: TaskView, target: LangGraphTarget): boolean {
  const t = task.target as { kind?: unknown; server?: unknown };
  return t.kind === "agent" && t.server === target.server && task.schedule.type === "cron";
}

interface AgentTargetView {
  readonly assistant_id: string;
  readonly input: unknown;
  readonly config?: unknown;
  readonly context?: unknown;
  readonly metadata?: Record<string, unknown>;
  readonly on_run_completed?: "keep" | "delete";
}

function agentOf(task: TaskView): AgentTargetView {
  return task.target as unknown as AgentTargetView;
}

/** A schedule's expressions as one string: several are joined by ` | ` (no cron field holds `|`). */
function scheduleTextOf(task: TaskView): string {
  const s = task.schedule;
  if (s.type !== "cron") return "";
  return typeof s.cron === "string" ? s.cron : s.cron.join(" | ");
}

/** The SDK's `Cron` of a punctual task. */
export function cronView(task: TaskView) {
  const agent = agentOf(task);
  const schedule = task.schedule as { timezone?: unknown; end_at?: unknown };
  const stateless = task.context.mode === "fresh_thread_per_run";
  const onRunCompleted = stateless ? (agent.on_run_completed ?? "keep") : null;
  const multitask = multitaskOf(task);
  return {
    cron_id: task.id,
    assistant_id: agent.assistant_id,
    thread_id: task.context.thread_id,
    on_run_completed: onRunCompleted,
    end_time: typeof schedule.end_at === "string" ? schedule.end_at : null,
    schedule: scheduleTextOf(task),
    timezone: typeof schedule.timezone === "string" ? schedule.timezone : null,
    created_at: task.created_at,
    updated_at: task.updated_at,
    payload: {
      assistant_id: agent.assistant_id,
      input: agent.input,
      ...(agent.config === undefined ? {} : { config: agent.config }),
      ...(agent.context === undefined ? {} : { context: agent.context }),
      ...(agent.metadata === undefined ? {} : { metadata: agent.metadata }),
      ...(multitask === null ? {} : { multitask_strategy: multitask }),
      ...(onRunCompleted === null ? {} : { on_run_completed: onRunCompleted }),
    },
    user_id: task.owner,
    // A paused cron has no next run (punctual keeps the instant to resume from; it is not shown).
    next_run_date: task.status === "enabled" ? task.next_run_at : null,
    metadata: agent.metadata ?? {},
    enabled: task.status === "enabled",
  };
}
export type CronView = ReturnType<typeof cronView>;

/** Whether a cron passes a search's or count's filters (metadata: each pair equal, as JSON). */
export function matchesCron(
  cron: CronView,
  filter: {
    readonly assistant_id?: string | null | undefined;
    readonly thread_id?: string | null | undefined;
    readonly enabled?: boolean | null | undefined;
    readonly metadata?: Readonly<Record<string, unknown>> | null | undefined;
  },
): boolean {
  if (filter.assistant_id != null && cron.assistant_id !== filter.assistant_id) return false;
  if (filter.thread_id != null && cron.thread_id !== filter.thread_id) return false;
  if (filter.enabled != null && cron.enabled !== filter.enabled) return false;
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    if (!(key in cron.metadata) || !sameJson(cron.metadata[key], value)) return false;
  }
  return true;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

/** Sorts (default `created_at` descending), pages and projects a search's answer. */
export function searchAnswer(crons: readonly CronView[], search: CronSearchBody, now: string) {
  const by = search.sort_by ?? "created_at";
  const direction = (search.sort_order ?? "desc") === "asc" ? 1 : -1;
  const sorted = [...crons].sort((a, b) => {
    const x = a[by] ?? "";
    const y = b[by] ?? "";
    if (x !== y) return (x < y ? -1 : 1) * direction;
    return (a.cron_id < b.cron_id ? -1 : a.cron_id > b.cron_id ? 1 : 0) * direction;
  });
  const page = sorted.slice(search.offset, search.offset + search.limit);
  const select = search.select;
  if (select == null || select.length === 0) return page;
  return page.map((cron) => {
    const all: Record<string, unknown> = { ...cron, now };
    return Object.fromEntries(select.map((field) => [field, all[field] ?? null]));
  });
}
