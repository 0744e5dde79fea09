/**
 * Which nominal times are due (docs/semantics.md#the-life-of-an-occurrence): after the task's
 * `decided_through` up to now, those that fire with their jittered fire times and the excluded ones
 * (docs/schedules.md#exclude) as stretches, each bounded per admission. admission.ts decides what
 * becomes of them.
 */
import { jitteredFireAt } from "./occurrence.js";
import { movedFireOf } from "./schedule/moved-occurrence.js";
import { excludedAt, nextAfter } from "./schedule/schedule-spec.js";
import type { Task } from "./task.js";
import type { Instant } from "./time.js";

/** At most this many nominal times are examined per task per admission; the rest wait for the next. */
export const MAX_NOMINAL_PER_ADMISSION = 20_000;

/**
 * At most this many excluded nominal times are recorded per task per admission, as one record per
 * stretch: a per-second task's holiday (86,400) in one record, in about 50 ms of one pass (measured).
 */
export const MAX_EXCLUDED_PER_ADMISSION = 200_000;

/** A due nominal time that fires, with its jittered fire time. */
export interface Due {
  readonly scheduledFor: Instant;
  readonly fireAt: Instant;
  /** Moved off an excluded date: `fireAt` is the moved instant (docs/schedules.md#moved-occurrences). */
  readonly moved?: boolean;
}

/** Consecutive due nominal times on excluded dates. */
export interface ExcludedStretch {
  readonly from: Instant;
  readonly until: Instant;
  readonly count: number;
}

/**
 * The due nominal times after `decided_through` up to `now`: those that fire, with their jittered fire
 * times, and the excluded ones as stretches (both in order).
 */
export function collectDue(
  task: Task,
  now: Instant,
): { due: Due[]; excluded: ExcludedStretch[]; more: boolean; scheduleEnded: boolean } {
  const spec = task.schedule;
  const due: Due[] = [];
  const excluded: ExcludedStretch[] = [];
  let open: { from: Instant; until: Instant; count: number } | null = null;
  let excludedCount = 0;
  let previous: Instant | null = null;
  let current = nextAfter(spec, task.decidedThrough);
  let next = current === null ? null : decideAt(spec, current, previous);
  while (
    next !== null &&
    next.at <= now &&
    due.length < MAX_NOMINAL_PER_ADMISSION &&
    excludedCount < MAX_EXCLUDED_PER_ADMISSION
  ) {
    const at: Instant = next.scheduledFor;
    if (next.excluded) {
      excludedCount++;
      if (open === null) open = { from: at, until: at, count: 1 };
      else {
        open.until = at;
        open.count++;
      }
    } else {
      if (open !== null) excluded.push(open);
      open = null;
      // A moved occurrence fires at its moved instant, without jitter (docs/schedules.md#moved-occurrences).
      const fireAt = next.moved
        ? next.at
        : jitteredFireAt({
            taskId: task.id,
            scheduledFor: at,
            jitterMs: spec.jitterMs,
            nextNominal: next.following,
          });
      due.push({ scheduledFor: at, fireAt, moved: next.moved });
    }
    previous = at;
    current = next.following;
    next = current === null ? null : decideAt(spec, current, previous);
  }
  if (open !== null) excluded.push(open);
  return {
    due,
    excluded,
    more: next !== null && next.at <= now,
    scheduleEnded: current === null,
  };
}

/**
 * When the occurrence at nominal time `at` is decided: at its nominal time, or at its moved instant
 * (before it for `previous`, moved-occurrence.ts). `excluded` when it is recorded as excluded.
 */
function decideAt(
  spec: Task["schedule"],
  at: Instant,
  previous: Instant | null,
): {
  scheduledFor: Instant;
  at: Instant;
  excluded: boolean;
  moved: boolean;
  following: Instant | null;
} {
  const following = nextAfter(spec, at);
  if (excludedAt(spec, at) === null) {
    return { scheduledFor: at, at, excluded: false, moved: false, following };
  }
  const moved = movedFireOf(spec, at, { previous, following });
  return moved === null
    ? { scheduledFor: at, at, excluded: true, moved: false, following }
    : { scheduledFor: at, at: moved, excluded: false, moved: true, following };
}

/**
 * The excluded nominal times that lead the task's undecided ones, up to `now`, as one stretch (or null).
 */
export function leadingExcluded(task: Task, now: Instant): ExcludedStretch | null {
  let stretch: { from: Instant; until: Instant; count: number } | null = null;
  let previous: Instant | null = null;
  let current = nextAfter(task.schedule, task.decidedThrough);
  while (
    current !== null &&
    current <= now &&
    (stretch?.count ?? 0) < MAX_EXCLUDED_PER_ADMISSION &&
    excludedAt(task.schedule, current) !== null &&
    movedFireOf(task.schedule, current, { previous }) === null
  ) {
    stretch =
      stretch === null
        ? { from: current, until: current, count: 1 }
        : { from: stretch.from, until: current, count: stretch.count + 1 };
    previous = current;
    current = nextAfter(task.schedule, current);
  }
  return stretch;
}
