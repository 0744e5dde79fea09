/**
 * Per-owner quotas (docs/security.md#quotas), operator-set with per-owner overrides: tasks an owner may
 * have, the least period of a schedule, runs admitted per minute, backfilled runs per hour. The values
 * and their checks live here, beside the input limits of `limits.ts`; the counts come from the store
 * (tasks, recent runs) or, for the scheduled admission rate, from `AdmissionWindow`.
 */
import type { CalendarQuotaCheck } from "../../domain/ports/calendar-repository.js";
import type { TaskCountCheck } from "../../domain/ports/task-repository.js";
import { LimitExceededError, QuotaExceededError } from "../../domain/errors.js";
import type { OwnerId } from "../../domain/ids.js";
import { gapBelow } from "../../domain/schedule/smallest-period.js";
import type { ScheduleSpec } from "../../domain/schedule/schedule-types.js";
import type { Instant } from "../../domain/time.js";

/** One owner's quotas. */
export interface OwnerQuotas {
  /** Tasks (not deleted) an owner may have. @default 10,000 */
  readonly tasksPerOwner: number;
  /** The least interval, or least gap between two cron fires, in ms. @default 1,000 */
  readonly minPeriodMs: number;
  /** Scheduled and triggered runs an owner's tasks are admitted per minute. @default 6,000 */
  readonly runsPerMinute: number;
  /** Backfilled runs an owner may make per hour. @default 10,000 */
  readonly backfillRunsPerHour: number;
  /** Named calendars an owner may have. @default 100 */
  readonly calendarsPerOwner: number;
  /** Items all of an owner's calendars may hold together. @default 10,000 */
  readonly calendarItemsPerOwner: number;
}

/** The library's and the CLI's quota options: the defaults for every owner, and overrides by owner. */
export interface QuotaOptions extends Partial<OwnerQuotas> {
  readonly overrides?: Readonly<Record<string, Partial<OwnerQuotas>>>;
}

export const DEFAULT_QUOTAS: OwnerQuotas = Object.freeze({
  tasksPerOwner: 10_000,
  minPeriodMs: 1_000,
  runsPerMinute: 6_000,
  backfillRunsPerHour: 10_000,
  calendarsPerOwner: 100,
  calendarItemsPerOwner: 10_000,
});

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** The names a refusal gives each quota (`limit` in the problem). */
export const QUOTA_NAMES: Readonly<Record<keyof OwnerQuotas, string>> = Object.freeze({
  tasksPerOwner: "tasks_per_owner",
  minPeriodMs: "min_period",
  runsPerMinute: "runs_per_minute",
  backfillRunsPerHour: "backfill_runs_per_hour",
  calendarsPerOwner: "calendars_per_owner",
  calendarItemsPerOwner: "calendar_items_per_owner",
});

const count = (value: number): string => value.toLocaleString("en-US");

/**
 * What every quota refusal says (docs/security.md#quotas): the quota, what it allows, what the owner
 * uses, and what the refused request asked for, e.g. `tasks_per_owner: 10,000 allowed, 10,000 used,
 * 1 more asked`.
 */
export function quotaMessage(
  limit: string,
  allowed: string | number,
  used: string | number,
  asked?: string | number,
): string {
  const text = (value: string | number) => (typeof value === "number" ? count(value) : value);
  const more = asked === undefined ? "" : `, ${text(asked)} more asked`;
  return `${limit}: ${text(allowed)} allowed, ${text(used)} used${more}`;
}

function checked(values: Partial<OwnerQuotas>, where: string): Partial<OwnerQuotas> {
  for (const [name, value] of Object.entries(values)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`${where}${name} must be a non-negative integer`);
    }
  }
  return values;
}

/** A quota value that limits nothing (`Quotas.UNLIMITED`'s). */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** The quotas in force: each owner's are the defaults under its overrides. */
export class Quotas {
  /**
   * No quota at all: the library's default, where one owner is the rule (docs/operations.md#quotas);
   * `serve` and `worker` apply `DEFAULT_QUOTAS`.
   */
  static readonly UNLIMITED = new Quotas({
    tasksPerOwner: NO_LIMIT,
    minPeriodMs: 0,
    runsPerMinute: NO_LIMIT,
    backfillRunsPerHour: NO_LIMIT,
    calendarsPerOwner: NO_LIMIT,
    calendarItemsPerOwner: NO_LIMIT,
  });

  readonly #defaults: OwnerQuotas;
  readonly #overrides: ReadonlyMap<string, OwnerQuotas>;

  /** @throws RangeError when a value is not a non-negative integer */
  constructor(options: QuotaOptions = {}) {
    const { overrides = {}, ...defaults } = options;
    this.#defaults = { ...DEFAULT_QUOTAS, ...checked(defaults, "") };
    this.#overrides = new Map(
      Object.entries(overrides).map(([owner, values]) => [
        owner,
        { ...this.#defaults, ...checked(values, `${owner}: `) },
      ]),
    );
  }

  of(owner: OwnerId): OwnerQuotas {
    return this.#overrides.get(owner) ?? this.#defaults;
  }

  /** The defaults and each overridden owner's quotas, for the start line. */
  summary(): OwnerQuotas & { readonly overrides: Readonly<Record<string, OwnerQuotas>> } {
    return { ...this.#defaults, overrides: Object.fromEntries(this.#overrides) };
  }
}

/**
 * The `tasks_per_owner` check a store's insert runs in its transaction, under a lock on the owner's
 * count (TaskCountCheck): exact however many creates and batches race, on every replica. None when no
 * task quota applies (the library's default), so the insert counts nothing.
 */
export function taskCountCheck(quotas: OwnerQuotas): TaskCountCheck | undefined {
  if (quotas.tasksPerOwner >= NO_LIMIT) return undefined;
  return (_owner, existing, adding) => {
    if (existing + adding <= quotas.tasksPerOwner) return;
    throw new LimitExceededError(
      QUOTA_NAMES.tasksPerOwner,
      quotas.tasksPerOwner,
      quotaMessage(QUOTA_NAMES.tasksPerOwner, quotas.tasksPerOwner, existing, adding),
    );
  };
}

/**
 * The `calendars_per_owner` and `calendar_items_per_owner` check a store's calendar put runs in its
 * transaction, under a lock on the owner's calendars (CalendarQuotaCheck): exact on every replica. A
 * put that replaces a calendar adds no calendar, and one that does not grow its items is never
 * refused, so lowering a quota refuses only what would grow past it. None when neither quota applies.
 */
export function calendarQuotaCheck(quotas: OwnerQuotas): CalendarQuotaCheck | undefined {
  if (quotas.calendarsPerOwner >= NO_LIMIT && quotas.calendarItemsPerOwner >= NO_LIMIT) {
    return undefined;
  }
  return (_owner, held, items) => {
    if (held.current === null && held.calendars + 1 > quotas.calendarsPerOwner) {
      throw new LimitExceededError(
        QUOTA_NAMES.calendarsPerOwner,
        quotas.calendarsPerOwner,
        quotaMessage(QUOTA_NAMES.calendarsPerOwner, quotas.calendarsPerOwner, held.calendars, 1),
      );
    }
    const before = held.current ?? 0;
    if (items <= before || held.items - before + items <= quotas.calendarItemsPerOwner) return;
    throw new LimitExceededError(
      QUOTA_NAMES.calendarItemsPerOwner,
      quotas.calendarItemsPerOwner,
      quotaMessage(
        QUOTA_NAMES.calendarItemsPerOwner,
        quotas.calendarItemsPerOwner,
        held.items,
        items - before,
      ),
    );
  };
}

/**
 * The schedule fires no more often than `minPeriodMs`.
 * @throws limit_exceeded (`min_period`, in ms)
 */
export function checkMinPeriod(quotas: OwnerQuotas, schedule: ScheduleSpec, now: Instant): void {
  // A cron fires at whole seconds: none can be denser than 1 s, so only a larger minimum asks it.
  if (schedule.type === "cron" && quotas.minPeriodMs <= 1_000) return;
  const gap = gapBelow(schedule, now, quotas.minPeriodMs);
  if (gap !== null) {
    throw new LimitExceededError(
      QUOTA_NAMES.minPeriodMs,
      quotas.minPeriodMs,
      `${quotaMessage(QUOTA_NAMES.minPeriodMs, `${count(quotas.minPeriodMs)} ms`, `${count(gap.ms)} ms`)} (the least gap between two fires: ${gap.between})`,
    );
  }
}

function windowText(windowMs: number): string {
  if (windowMs === MINUTE_MS) return "minute";
  if (windowMs === HOUR_MS) return "hour";
  return `${count(windowMs / 1000)} s`;
}

/**
 * `adding` more runs fit a window that holds `recent` of at most `max`.
 * @throws quota_exceeded naming `limit`, with the window's length as the retry hint
 */
export function checkRate(
  args: { limit: string; max: number; windowMs: number },
  recent: number,
  adding: number,
): void {
  if (recent + adding > args.max) {
    throw new QuotaExceededError(
      args.limit,
      args.max,
      Math.ceil(args.windowMs / 1000),
      `${quotaMessage(args.limit, args.max, recent, adding)} (in the last ${windowText(args.windowMs)})`,
    );
  }
}
