/**
 * Admission (docs/semantics.md#the-life-of-an-occurrence): turns a task's due nominal times
 * (admission-due.ts) into decisions (queued runs, skipped, missed and excluded records) and the task's
 * new schedule fields. Pure: the adapter runs it inside one transaction under the task's row lock and
 * writes exactly what it returns. Admission never reads the budget.
 */
import { collectDue, leadingExcluded } from "./admission-due.js";
import type { Due, ExcludedStretch } from "./admission-due.js";
import type { RunId, ThreadId } from "./ids.js";
import { BUFFER_ALL_LIMIT, CATCH_UP_ALL_LIMIT, isExclusive } from "./options.js";
import type { CatchUpPolicy, OverlapPolicy } from "./options.js";
import { idempotencyKeyFor } from "./occurrence.js";
import type { RunStatus } from "./run.js";
import { nextDueAfter } from "./schedule/schedule-spec.js";
import type { Task, TaskStatus } from "./task.js";
import { threadScopeOf } from "./target.js";
import type { Instant } from "./time.js";

/** What admission needs to know about one of the task's active runs. */
export interface ActiveRunView {
  readonly id: RunId;
  readonly status: Extract<RunStatus, "queued" | "launching" | "running">;
  readonly cancelRequested: boolean;
}

/** A new queued run. `threadId: null` asks the writer to mint a fresh thread id. */
export interface QueueDecision {
  readonly kind: "queue";
  readonly trigger: "scheduled" | "backfill";
  readonly scheduledFor: Instant;
  readonly fireAt: Instant;
  readonly notBefore: Instant;
  readonly idempotencyKey: string;
  readonly exclusive: boolean;
  readonly threadScope: string;
  readonly threadId: ThreadId | null;
  /** From an occurrence moved off an excluded date (docs/schedules.md#moved-occurrences). */
  readonly moved: boolean;
}

export const SKIP_REASONS = [
  "overlap",
  "coalesced",
  "buffer_full",
  "superseded",
  "excluded",
  "quota",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** A terminal `skipped` record for one nominal time (an excluded stretch is an `ExcludeDecision`). */
export interface SkipDecision {
  readonly kind: "skip";
  readonly scheduledFor: Instant;
  readonly fireAt: Instant;
  readonly reason: Exclude<SkipReason, "excluded">;
}

export const MISS_REASONS = ["down", "paused", "window"] as const;
export type MissReason = (typeof MISS_REASONS)[number];

/** One terminal `missed` record covering `count` consecutive nominal times from `from` to `until`. */
export interface MissDecision {
  readonly kind: "miss";
  readonly from: Instant;
  readonly until: Instant;
  readonly count: number;
  readonly reason: MissReason;
}

/**
 * One terminal `skipped` record, reason `excluded`, covering `count` consecutive nominal times from `from`
 * to `until` that fall on excluded dates (docs/schedules.md#exclude).
 */
export interface ExcludeDecision {
  readonly kind: "exclude";
  readonly from: Instant;
  readonly until: Instant;
  readonly count: number;
  readonly reason: "excluded";
}

export type Decision = QueueDecision | SkipDecision | MissDecision | ExcludeDecision;

/** What to do to an existing active run: cancel it now (queued) or ask its target to stop. */
export interface CancelInstruction {
  readonly runId: RunId;
  readonly action: "cancel" | "request_cancel";
  readonly reason: "superseded";
}

/** The task's fields admission owns, after this admission. */
export interface AdmissionTaskFields {
  readonly status: TaskStatus;
  readonly nextRunAt: Instant | null;
  readonly decidedThrough: Instant;
  readonly admittedCount: number;
  /** Set only when a once task's occurrence is skipped or missed (docs/semantics.md#task-statuses). */
  readonly lastError?: string;
}

export interface Admission {
  readonly decisions: readonly Decision[];
  readonly cancellations: readonly CancelInstruction[];
  readonly task: AdmissionTaskFields;
}

/** Admission after downtime (`scheduled`), or of the occurrences inside a pause (`resume`). */
export type AdmissionMode =
  { readonly kind: "scheduled" } | { readonly kind: "resume"; readonly catchUp: CatchUpPolicy };

export interface AdmissionInput {
  readonly task: Task;
  readonly now: Instant;
  readonly activeRuns: readonly ActiveRunView[];
  readonly mode?: AdmissionMode;
}

/** Decides every nominal time of `task` after `decided_through` up to `now` (at most a bounded batch). */
export function admit(input: AdmissionInput): Admission {
  const { task, now } = input;
  const mode = input.mode ?? { kind: "scheduled" };
  const { due, excluded, more, scheduleEnded } = collectDue(task, now);
  const builder = new DecisionBuilder(task, input.activeRuns);
  const catchUp = mode.kind === "resume" ? mode.catchUp : task.options.catchUp.policy;
  const lastOverdue = findLastOverdue(due, task, now, mode);
  // `latest` runs the most recent due occurrence: when an on-time one follows, that one is it.
  const onTimeFollows = due.some((o) => classify(o, task, now, mode) === "on_time");
  let caughtUp = 0;

  let stretch = 0;
  for (const occurrence of due) {
    if (builder.maxRunsReached()) break;
    // Excluded stretches are decided in order with the others: first those before this occurrence.
    while (stretch < excluded.length && (excluded[stretch]?.from ?? 0) < occurrence.scheduledFor) {
      const before = excluded[stretch++];
      if (before !== undefined) builder.exclude(before);
    }
    const category = classify(occurrence, task, now, mode);
    if (category === "window") {
      builder.miss(occurrence.scheduledFor, "window");
    } else if (category === "overdue") {
      const reason: MissReason = mode.kind === "resume" ? "paused" : "down";
      if (catchUp === "all" && caughtUp < CATCH_UP_ALL_LIMIT) {
        caughtUp++;
        builder.queue(occurrence, { ignoreOverlap: true });
      } else if (catchUp === "latest" && occurrence === lastOverdue && !more && !onTimeFollows) {
        builder.queue(occurrence, { ignoreOverlap: false });
      } else {
        builder.miss(occurrence.scheduledFor, reason);
      }
    } else {
      builder.queue(occurrence, { ignoreOverlap: false });
    }
  }
  for (const after of excluded.slice(stretch)) {
    if (builder.maxRunsReached()) break;
    builder.exclude(after);
  }
  return builder.finish({ more, scheduleEnded });
}

/**
 * The excluded nominal times that lead the task's undecided ones, up to `now`, as one stretch (or null):
 * what a schedule or calendar edit records first, so that an occurrence excluded when it came due stays
 * excluded (they are otherwise recorded when the next fire comes due).
 */
export function excludedPrefix(task: Task, now: Instant): ExcludeDecision | null {
  const stretch = leadingExcluded(task, now);
  return stretch === null ? null : { kind: "exclude", ...stretch, reason: "excluded" };
}

function classify(
  occurrence: Due,
  task: Task,
  now: Instant,
  mode: AdmissionMode,
): "window" | "overdue" | "on_time" {
  // In a resume every occurrence inside the pause is overdue by definition; the window does not apply.
  if (mode.kind === "resume") return "overdue";
  if (occurrence.fireAt < now - task.options.catchUp.windowMs) return "window";
  if (now - occurrence.fireAt > task.options.lateAfterMs) return "overdue";
  return "on_time";
}

function findLastOverdue(
  due: readonly Due[],
  task: Task,
  now: Instant,
  mode: AdmissionMode,
): Due | undefined {
  let last: Due | undefined;
  for (const occurrence of due) {
    if (classify(occurrence, task, now, mode) === "overdue") last = occurrence;
  }
  return last;
}

/** Accumulates decisions while tracking the task's queue depth and active runs (docs/semantics.md#the-life-of-an-occurrence overlap rules). */
class DecisionBuilder {
  readonly #task: Task;
  readonly #decisions: Decision[] = [];
  readonly #cancellations: CancelInstruction[] = [];
  readonly #existing: readonly ActiveRunView[];
  #active: number;
  #queued: number;
  #admitted: number;
  #decidedThrough: Instant;
  #lastQueueIndex = -1;

  constructor(task: Task, activeRuns: readonly ActiveRunView[]) {
    this.#task = task;
    this.#existing = activeRuns;
    this.#active = activeRuns.length;
    this.#queued = activeRuns.filter((r) => r.status === "queued").length;
    this.#admitted = task.admittedCount;
    this.#decidedThrough = task.decidedThrough;
  }

  maxRunsReached(): boolean {
    const max = this.#task.schedule.maxRuns;
    return max !== null && this.#admitted >= max;
  }

  /** Records an excluded stretch as one `skipped` range (reason `excluded`). */
  exclude(stretch: ExcludedStretch): void {
    this.#decidedThrough = stretch.until;
    this.#decisions.push({ kind: "exclude", ...stretch, reason: "excluded" });
  }

  miss(at: Instant, reason: MissReason): void {
    this.#decidedThrough = at;
    const last = this.#decisions.at(-1);
    if (last?.kind === "miss" && last.reason === reason) {
      this.#decisions[this.#decisions.length - 1] = { ...last, until: at, count: last.count + 1 };
      return;
    }
    this.#decisions.push({ kind: "miss", from: at, until: at, count: 1, reason });
  }

  queue(occurrence: Due, how: { ignoreOverlap: boolean }): void {
    this.#decidedThrough = occurrence.scheduledFor;
    const skip = how.ignoreOverlap ? null : this.#overlapVerdict(this.#task.options.overlap);
    if (skip !== null) {
      this.#decisions.push({ kind: "skip", ...occurrence, reason: skip });
      return;
    }
    const task = this.#task;
    const context = task.context;
    // Catch-up `all` queues whatever the overlap policy: `cancel_other` never supersedes those runs.
    if (!how.ignoreOverlap) this.#lastQueueIndex = this.#decisions.length;
    this.#decisions.push({
      kind: "queue",
      trigger: "scheduled",
      scheduledFor: occurrence.scheduledFor,
      fireAt: occurrence.fireAt,
      notBefore: occurrence.fireAt,
      idempotencyKey: idempotencyKeyFor(task.id, "scheduled", occurrence.scheduledFor),
      exclusive: isExclusive(task.options.overlap),
      threadScope: threadScopeOf(task.target, task.owner),
      threadId: context.mode === "reuse_thread" ? context.threadId : null,
      moved: occurrence.moved === true,
    });
    this.#active++;
    this.#queued++;
    this.#admitted++;
  }

  /** Null to queue, or the reason the occurrence is skipped. Applies side effects of `cancel_other`. */
  #overlapVerdict(policy: OverlapPolicy): "overlap" | "coalesced" | "buffer_full" | null {
    switch (policy) {
      case "skip":
        return this.#active > 0 ? "overlap" : null;
      case "buffer_one":
        if (this.#active === 0 || this.#queued === 0) return null;
        return "coalesced";
      case "buffer_all":
        return this.#queued >= BUFFER_ALL_LIMIT ? "buffer_full" : null;
      case "cancel_other":
        this.#supersedeActive();
        return null;
      case "allow_all":
        return null;
    }
  }

  /** `cancel_other`: the runs already active are cancelled; a run queued earlier in this batch is superseded. */
  #supersedeActive(): void {
    if (this.#lastQueueIndex >= 0) {
      const earlier = this.#decisions[this.#lastQueueIndex];
      if (earlier?.kind === "queue") {
        const { scheduledFor, fireAt } = earlier;
        this.#decisions[this.#lastQueueIndex] = {
          kind: "skip",
          scheduledFor,
          fireAt,
          reason: "superseded",
        };
        this.#active--;
        this.#queued--;
        this.#admitted--;
      }
      this.#lastQueueIndex = -1;
    }
    if (this.#cancellations.length > 0) return;
    for (const run of this.#existing) {
      if (run.cancelRequested) continue;
      const action = run.status === "queued" ? "cancel" : "request_cancel";
      this.#cancellations.push({ runId: run.id, action, reason: "superseded" });
    }
  }

  finish(state: { more: boolean; scheduleEnded: boolean }): Admission {
    const task = this.#task;
    const ended = this.maxRunsReached() || (state.scheduleEnded && !state.more);
    const decidedThrough = this.#decidedThrough;
    // The next fire: excluded nominal times before it are recorded when it comes due.
    const nextRunAt = ended ? null : nextDueAfter(task.schedule, decidedThrough);
    const fields: AdmissionTaskFields = {
      status: ended ? endStatus(task, this.#decisions) : task.status,
      nextRunAt,
      decidedThrough: decidedThrough > task.decidedThrough ? decidedThrough : task.decidedThrough,
      admittedCount: this.#admitted,
    };
    const onceError =
      ended && task.schedule.type === "once" ? onceLastError(this.#decisions) : null;
    return {
      decisions: this.#decisions,
      cancellations: this.#cancellations,
      task: onceError === null ? fields : { ...fields, lastError: onceError },
    };
  }
}

/**
 * A recurring task whose schedule has ended is `completed`; a once task stays `enabled` while its run is
 * pending (completion decides), and is `failed` when its only occurrence was skipped or missed.
 */
function endStatus(task: Task, decisions: readonly Decision[]): TaskStatus {
  if (task.schedule.type !== "once") return "completed";
  return onceLastError(decisions) === null ? task.status : "failed";
}

function onceLastError(decisions: readonly Decision[]): string | null {
  const last = decisions.at(-1);
  if (last === undefined || last.kind === "queue") return null;
  return last.kind === "skip"
    ? `the occurrence was skipped (${last.reason})`
    : `the occurrence was missed (${last.reason})`;
}
