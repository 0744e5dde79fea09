/**
 * The read shapes of tasks and runs: snake_case JSON with RFC 3339 UTC timestamps, identical for the
 * library and the HTTP API (docs/library.md). Each edge maps internal names in exactly this one place; the
 * types are those of the zod schemas in `view-schemas.ts`, so the mapping and the documented shapes
 * cannot drift apart.
 */
import type { z } from "zod";
import type { Calendar } from "../../domain/calendar.js";
import type { Explanation } from "../../domain/explain.js";
import type { NominalOccurrence } from "../../domain/explain-window.js";
import type { Run } from "../../domain/run.js";
import { civilFromDays, MS_PER_DAY } from "../../domain/schedule/civil-time.js";
import { calendarItemInput, scheduleToInput } from "../../domain/schedule/schedule-spec.js";
import type {
  DescribedOccurrence,
  DstNote,
  ExclusionHit,
  SuppressedFire,
} from "../../domain/schedule/schedule-spec.js";
import type { Task } from "../../domain/task.js";
import type {
  AgentRunConfig,
  ExecutionContext,
  Target,
  WebhookSignature,
} from "../../domain/target.js";
import type { TaskOptions } from "../../domain/options.js";
import type { Instant } from "../../domain/time.js";
import type {
  AgentRunConfigView,
  ContextView,
  DstNoteView,
  ExclusionHitView,
  OptionsView,
  TargetView,
  calendarPutResultSchema,
  calendarViewSchema,
  explanationViewSchema,
  occurrenceViewSchema,
  runViewSchema,
  taskViewSchema,
} from "./view-schemas.js";

export type TaskView = z.output<typeof taskViewSchema>;
export type RunView = z.output<typeof runViewSchema>;
export type OccurrenceView = z.output<typeof occurrenceViewSchema>;
export type ExplanationView = z.output<typeof explanationViewSchema>;
export type CalendarView = z.output<typeof calendarViewSchema>;
/** The calendar after a put, and how many tasks took its new items (the API's and the library's answer). */
export type PutCalendarView = z.output<typeof calendarPutResultSchema>;

/** Where `toISOString` stops writing four-digit years. */
const FOUR_DIGIT_YEARS_END = Date.UTC(10_000, 0, 1);
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0"));

/** `YYYY-MM-DD` of a day count since 1970-01-01 (0 <= days, four-digit years). */
function dateText(days: number): string {
  const { year, month, day } = civilFromDays(days);
  const hundreds = Math.floor(year / 100);
  // Every index is 0..99 (four-digit years, months, days): the `?? ""` (noUncheckedIndexedAccess) of
  // these lookups and of formatInstant's are never taken, and not measured.
  /* v8 ignore next */
  return `${TWO_DIGITS[hundreds] ?? ""}${TWO_DIGITS[year - hundreds * 100] ?? ""}-${TWO_DIGITS[month] ?? ""}-${TWO_DIGITS[day] ?? ""}`;
}

/**
 * The last instants formatted, by `at % FORMATTED_SLOTS` (a prime: whole seconds and minutes spread over
 * every slot). A run's view shows the same instant several times (its nominal time, fire time and
 * `not_before` of a first attempt), a burst's runs share their nominal time and a claim's runs their
 * claim instants: a hit costs a comparison where a format made about 400 bytes of intermediate strings
 * (docs/benchmarks.md, the worker's side of a launch). The strings are immutable, so sharing one is
 * safe; the table holds at most 251 of them.
 */
const FORMATTED_SLOTS = 251;
const formattedAt = new Array<number>(FORMATTED_SLOTS).fill(-1);
const formattedText = new Array<string>(FORMATTED_SLOTS).fill("");
/** The minute of the last instant formatted (minutes since the epoch), and its `YYYY-MM-DDThh:mm:`. */
let lastMinute = -1;
let lastMinuteText = "";

/**
 * RFC 3339 UTC with `Z`, without a fraction for whole seconds. Integer arithmetic: `toISOString` took
 * half a microsecond, a dozen times per run shown (a year's ledger, every handler launch). Recent
 * instants are answered from `formattedAt`/`formattedText`, the current minute's prefix reused.
 */
export function formatInstant(at: Instant): string;
export function formatInstant(at: Instant | null): string | null;
export function formatInstant(at: Instant | null): string | null {
  if (at === null) return null;
  if (!Number.isSafeInteger(at) || at < 0 || at >= FOUR_DIGIT_YEARS_END) {
    const iso = new Date(at).toISOString();
    return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
  }
  const slot = at % FORMATTED_SLOTS;
  // A slot's text is set with its instant: the `?? ""` is never taken.
  /* v8 ignore next */
  if (formattedAt[slot] === at) return formattedText[slot] ?? "";
  const minute = Math.floor(at / 60_000);
  if (minute !== lastMinute) {
    const days = Math.floor(at / MS_PER_DAY);
    const minuteOfDay = minute - days * 1440;
    /* v8 ignore next */
    lastMinuteText = `${dateText(days)}T${TWO_DIGITS[Math.floor(minuteOfDay / 60)] ?? ""}:${TWO_DIGITS[minuteOfDay % 60] ?? ""}:`;
    lastMinute = minute;
  }
  const ms = at % 1000;
  /* v8 ignore next */
  const ss = TWO_DIGITS[Math.floor(at / 1000) % 60] ?? "";
  const text =
    ms === 0 ? `${lastMinuteText}${ss}Z` : `${lastMinuteText}${ss}.${String(ms).padStart(3, "0")}Z`;
  formattedAt[slot] = at;
  formattedText[slot] = text;
  return text;
}

/** ISO-8601 duration of whole seconds (`PT90S`), or milliseconds when not whole. */
export function formatDuration(ms: number): string {
  if (ms % 1000 !== 0) return `PT${ms / 1000}S`;
  const seconds = ms / 1000;
  if (seconds === 0) return "PT0S";
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `PT${h > 0 ? `${h}H` : ""}${m > 0 ? `${m}M` : ""}${s > 0 ? `${s}S` : ""}`;
}

/** `target.config` as the API shows it (snake_case). */
export function agentRunConfigView(config: AgentRunConfig): AgentRunConfigView {
  return {
    ...(config.configurable === undefined ? {} : { configurable: { ...config.configurable } }),
    ...(config.recursionLimit === undefined ? {} : { recursion_limit: config.recursionLimit }),
    ...(config.tags === undefined ? {} : { tags: [...config.tags] }),
  };
}

export function targetView(target: Target): TargetView {
  switch (target.kind) {
    case "agent":
      return {
        kind: "agent",
        server: target.server,
        assistant_id: target.assistantId,
        input: target.input,
        ...(target.config === undefined ? {} : { config: agentRunConfigView(target.config) }),
        ...(target.context === undefined ? {} : { context: { ...target.context } }),
        ...(target.metadata === undefined ? {} : { metadata: { ...target.metadata } }),
        ...(target.onRunCompleted === undefined ? {} : { on_run_completed: target.onRunCompleted }),
      };
    case "webhook":
      return {
        kind: "webhook",
        url: target.url,
        method: target.method,
        headers: { ...target.headers },
        input: target.input,
        cancel_url: target.cancelUrl,
        idempotent: target.idempotent,
        signature: target.signature ?? "punctual",
      };
    case "handler":
      return { kind: "handler", name: target.name, input: target.input };
  }
}

export function contextView(context: ExecutionContext): ContextView {
  return context.mode === "reuse_thread"
    ? { mode: context.mode, thread_id: context.threadId }
    : { mode: context.mode, thread_id: null };
}

export function optionsView(options: TaskOptions): OptionsView {
  return {
    overlap: options.overlap,
    catch_up: { window: formatDuration(options.catchUp.windowMs), policy: options.catchUp.policy },
    late_after: formatDuration(options.lateAfterMs),
    retry: {
      max_attempts: options.retry.maxAttempts,
      initial: formatDuration(options.retry.initialMs),
      max_delay: formatDuration(options.retry.maxDelayMs),
    },
    run_timeout: formatDuration(options.runTimeoutMs),
    queue_timeout: formatDuration(options.queueTimeoutMs),
  };
}

/**
 * The secret as a receiver hands it to its verifier: as stored for `punctual`, and in the Standard
 * Webhooks form (`whsec_` and the base64 of the key's bytes, which are the stored text's) for
 * `standard_webhooks` (docs/targets.md#standard-webhooks).
 */
export function receiverSecret(secret: string, signature: WebhookSignature): string {
  if (signature === "punctual" || secret.startsWith("whsec_")) return secret;
  // The stored secrets are ASCII (base64url), so btoa's Latin-1 reading of them is their UTF-8.
  return `whsec_${btoa(secret)}`;
}

/**
 * The public shape of a task. `webhook_secret` is the key its webhooks are signed with (docs/semantics.md#launch), shown
 * to its owner so receivers can verify them; null for other targets, and when the operator signs every
 * webhook with one server-wide secret (`signsWithTaskSecret` false).
 */
export function taskView(task: Task, signsWithTaskSecret = true): TaskView {
  return {
    id: task.id,
    owner: task.owner,
    key: task.key,
    group: task.group,
    title: task.title,
    description: task.description,
    schedule: scheduleToInput(task.schedule),
    target: targetView(task.target),
    context: contextView(task.context),
    options: optionsView(task.options),
    metadata: { ...task.metadata },
    webhook_secret:
      signsWithTaskSecret && task.target.kind === "webhook"
        ? receiverSecret(task.webhookSecret, task.target.signature ?? "punctual")
        : null,
    status: task.status,
    next_run_at: formatInstant(task.nextRunAt),
    decided_through: formatInstant(task.decidedThrough),
    last_run_at: formatInstant(task.lastRunAt),
    last_run_id: task.lastRunId,
    last_error: task.lastError,
    run_count: task.runCount,
    admitted_count: task.admittedCount,
    version: task.version,
    created_at: formatInstant(task.createdAt),
    updated_at: formatInstant(task.updatedAt),
    defect:
      task.defect === null
        ? null
        : {
            detected_at: formatInstant(task.defect.detectedAt),
            fields: task.defect.fields.map((item) => ({ ...item })),
          },
  };
}

/** The public shape of a run. */
export function runView(run: Run): RunView {
  return {
    id: run.id,
    task_id: run.taskId,
    owner: run.owner,
    trigger: run.trigger,
    scheduled_for: formatInstant(run.scheduledFor),
    fire_at: formatInstant(run.fireAt),
    status: run.status,
    reason: run.reason,
    missed_count: run.missedCount,
    missed_until: formatInstant(run.missedUntil),
    attempt: run.attempt,
    failures: run.failures,
    not_before: formatInstant(run.notBefore),
    thread_scope: run.threadScope,
    thread_id: run.threadId,
    exclusive: run.exclusive,
    claim_expires_at: formatInstant(run.claimExpiresAt),
    target_run_id: run.targetRunId,
    idempotency_key: run.idempotencyKey,
    queued_at: formatInstant(run.queuedAt),
    launched_at: formatInstant(run.launchedAt),
    deadline_at: formatInstant(run.deadlineAt),
    finished_at: formatInstant(run.finishedAt),
    lateness_ms: run.latenessMs,
    late: run.late,
    cancel_requested_at: formatInstant(run.cancelRequestedAt),
    error: run.error,
    result: run.result,
    moved_from: run.moved ? formatInstant(run.scheduledFor) : null,
  };
}

function dstNoteView(note: DstNote | null): DstNoteView | null {
  return note === null
    ? null
    : note.kind === "gap_shifted"
      ? { kind: note.kind, nominal_wall: note.nominalWall, collapsed: note.collapsed }
      : { kind: note.kind };
}

/** The public shape of a named calendar. */
export function calendarView(calendar: Calendar): CalendarView {
  return {
    name: calendar.name,
    items: calendar.items.map(calendarItemInput),
    version: calendar.version,
    holidays:
      calendar.holidays == null
        ? null
        : {
            region: calendar.holidays.region,
            from_year: calendar.holidays.fromYear,
            through_year: calendar.holidays.throughYear,
          },
    created_at: formatInstant(calendar.createdAt),
    updated_at: formatInstant(calendar.updatedAt),
  };
}

/** Which item of `exclude` excludes an occurrence: the item as written, and its calendar (or null). */
export function exclusionView(hit: ExclusionHit): ExclusionHitView {
  return { item: calendarItemInput(hit.item), calendar: hit.calendar };
}

function suppressedFireView(fire: SuppressedFire) {
  return {
    kind: fire.kind,
    at: formatInstant(fire.at),
    wall: fire.wall,
    ...(fire.exclusion === undefined ? {} : { exclusion: exclusionView(fire.exclusion) }),
  };
}

/** The public shape of one upcoming fire (preview), with what DST or an exclusion does around it. */
export function occurrenceView(occurrence: DescribedOccurrence): OccurrenceView {
  return {
    at: formatInstant(occurrence.at),
    wall: occurrence.wall,
    offset: occurrence.offset,
    note: dstNoteView(occurrence.note),
    rule: occurrence.rule,
    suppressed_before: occurrence.suppressedBefore.map(suppressedFireView),
    ...(occurrence.movedFrom === undefined
      ? {}
      : { moved_from: suppressedFireView(occurrence.movedFrom) }),
  };
}

function nominalView(occurrence: NominalOccurrence | null) {
  if (occurrence === null) return null;
  return {
    scheduled_for: formatInstant(occurrence.scheduledFor),
    fire_at: formatInstant(occurrence.fireAt),
    local_wall: occurrence.wall,
    offset: occurrence.offset,
    dst_note: dstNoteView(occurrence.note),
    rule: occurrence.rule,
    exclusion: occurrence.exclusion === null ? null : exclusionView(occurrence.exclusion),
  };
}

/** The public shape of `explain`: a verdict, a sentence, the occurrences around the instant and the run. */
export function explanationView(explanation: Explanation): ExplanationView {
  const suppressed = explanation.suppressed;
  return {
    at: formatInstant(explanation.at),
    task_status: explanation.taskStatus,
    verdict: explanation.verdict,
    message: explanation.message,
    occurrence: nominalView(explanation.occurrence),
    next_occurrence: nominalView(explanation.nextOccurrence),
    suppressed:
      suppressed === null
        ? null
        : { kind: suppressed.kind, at: formatInstant(suppressed.at), local_wall: suppressed.wall },
    run: explanation.run === null ? null : runView(explanation.run),
    exclusion: explanation.exclusion === null ? null : exclusionView(explanation.exclusion),
  };
}

/** A page of a list, as the API answers it: `next_cursor` is null on the last page. */
export interface PageView<T> {
  readonly items: readonly T[];
  readonly next_cursor: string | null;
}
