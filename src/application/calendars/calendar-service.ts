/**
 * The owner's named calendars (docs/schedules.md#calendars): read, list, put and delete. A put that
 * changes a calendar refreshes every task that names it, each under its own row lock (`mutateTask`,
 * the lock admission takes), so that only occurrences not decided yet follow the new calendar, and
 * warns of each task naming it that will not fire while it stands.
 */
import type { Calendar, CalendarHolidays } from "../../domain/calendar.js";
import type { CalendarItem } from "../../domain/schedule/schedule-spec.js";
import type { OwnerId } from "../../domain/ids.js";
import { refreshCalendar } from "../../domain/calendar-commands.js";
import {
  CalendarChangedError,
  LimitExceededError,
  NotFoundError,
  ValidationError,
} from "../../domain/errors.js";
import { expandedExclusionItems, withCalendar } from "../../domain/calendar.js";
import { exclusionStall } from "../../domain/exclusion-stall.js";
import type { ExclusionStall } from "../../domain/exclusion-stall.js";
import { stallWarning } from "../../domain/explain-words.js";
import type { CalendarQuery, CalendarRepository } from "../../domain/ports/calendar-repository.js";
import type { HolidayRequest, HolidaySource } from "../../domain/ports/holiday-source.js";
import type { OwnerScope } from "../../domain/ports/queries.js";
import {
  CALENDAR_NAME_PATTERN,
  MAX_EXCLUSION_ITEMS,
  MAX_EXPANDED_EXCLUSION_ITEMS,
  STORED_SCHEDULE_WORK_STEPS,
  parseCalendarItems,
  withWorkBudget,
} from "../../domain/schedule/schedule-spec.js";
import { encodeCalendarItems } from "../../domain/schedule-codec.js";
import type { Task } from "../../domain/task.js";
import { DAY_MS } from "../../domain/time.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import { MAX_HOLIDAY_YEARS, calendarPutInputSchema } from "../shapes/schedule-input.js";
import type { HolidaysInput } from "../shapes/schedule-input.js";
import { nextTurn } from "../policy/next-turn.js";
import type { Store } from "../../domain/ports/store.js";
import { parseWith } from "../shapes/task-input.js";
import { calendarView } from "../shapes/view-mappers.js";
import type { CalendarView, PageView, PutCalendarView } from "../shapes/view-mappers.js";
import { calendarQuotaCheck, Quotas } from "../policy/quotas.js";

/** A put's outcome. */
export interface PutCalendarResult {
  readonly calendar: PutCalendarView;
  /** True when the calendar did not exist before. */
  readonly created: boolean;
}

export interface CalendarServiceDeps {
  readonly store: Store;
  /** Public holidays by region (docs/schedules.md#holidays); without it a put naming holidays is refused. */
  readonly holidays?: HolidaySource | undefined;
  /** Something may be due sooner (a refreshed task's next_run_at moved earlier). */
  readonly wake: () => void;
  /** Per-owner quotas (docs/security.md#quotas): calendars and their items. @default none */
  readonly quotas?: Quotas;
}

/**
 * How far ahead a calendar following a region's holidays holds them: the current year (UTC) and this
 * many after (docs/schedules.md#holidays). A put asks for this by default; the runtime extends a
 * calendar whose last year falls short, once a day.
 */
export const HOLIDAY_HORIZON_YEARS = 9;

/** Calendars extended per check at most (the next check takes the rest). */
const HOLIDAY_EXTENSIONS_PER_CHECK = 100;

/** What one check of the holiday calendars did. */
export interface HolidayUpkeep {
  /** The calendars that took a new version with later years' holidays. */
  readonly extended: readonly {
    readonly owner: OwnerId;
    readonly name: string;
    readonly throughYear: number;
  }[];
  /** The ones that could not be extended, and why (the next check tries again). */
  readonly failed: readonly {
    readonly owner: OwnerId;
    readonly name: string;
    readonly error: unknown;
  }[];
}

function checkName(name: string): void {
  if (!CALENDAR_NAME_PATTERN.test(name)) {
    throw ValidationError.of(
      "name",
      "must be 1 to 64 letters, digits, '_', '-' or '.', not starting with '.'",
    );
  }
}

export class CalendarService {
  readonly #deps: CalendarServiceDeps;

  constructor(deps: CalendarServiceDeps) {
    this.#deps = deps;
  }

  async get(actor: Actor, name: string): Promise<CalendarView> {
    const [found] = await this.#repository().findCalendars(actor.owner, [name]);
    if (found === undefined) throw new NotFoundError("calendar", name);
    return calendarView(found);
  }

  /** A page of the owner's calendars, by name. */
  async list(actor: Actor, query: CalendarQuery): Promise<PageView<CalendarView>> {
    const page = await this.#repository().listCalendars(actor.owner, query);
    return { items: page.items.map(calendarView), next_cursor: page.nextCursor };
  }

  /**
   * Creates the calendar or replaces its items (its version + 1; the same items change nothing), then
   * brings every task that names it to this version.
   */
  async put(actor: Actor, name: string, input: unknown, now: Instant): Promise<PutCalendarResult> {
    checkName(name);
    const body = parseWith(calendarPutInputSchema, input);
    const asked = this.#holidayYears(body.holidays, now);
    const holidayDates =
      asked === null ? [] : await this.#holidaySource().publicHolidays(asked.request);
    const given = new Set(body.items.filter((item) => typeof item === "string"));
    const items = this.#parseItems(
      [...body.items, ...holidayDates.filter((date) => !given.has(date))],
      now,
    );
    return this.#store(actor.owner, name, items, asked?.holidays ?? null, now);
  }

  /**
   * Brings every calendar following a region's holidays to the current year (UTC, from `now`) and the
   * `HOLIDAY_HORIZON_YEARS` after: the later years' holidays are added to its items as a new version,
   * which refreshes the tasks naming it as any put does (docs/schedules.md#holidays). The runtime calls
   * it once a day; a calendar that cannot take them (a quota, a task it would hold still) is reported
   * and tried again at the next check.
   */
  async extendHolidays(now: Instant): Promise<HolidayUpkeep> {
    const calendars = this.#deps.store.calendars;
    if (calendars === undefined || this.#deps.holidays === undefined) {
      return { extended: [], failed: [] };
    }
    const through = new Date(now).getUTCFullYear() + HOLIDAY_HORIZON_YEARS;
    const due = await calendars.calendarsWithHolidaysBefore(through, HOLIDAY_EXTENSIONS_PER_CHECK);
    const extended: { owner: OwnerId; name: string; throughYear: number }[] = [];
    const failed: { owner: OwnerId; name: string; error: unknown }[] = [];
    for (const { owner, name } of due) {
      await nextTurn();
      try {
        const [calendar] = await calendars.findCalendars(owner, [name]);
        const holidays = calendar?.holidays;
        if (calendar === undefined || holidays == null || holidays.throughYear >= through) continue;
        const dates = await this.#holidaySource().publicHolidays({
          region: holidays.region,
          fromYear: holidays.throughYear + 1,
          toYear: through,
        });
        const held = new Set(
          calendar.items.flatMap((item) => (item.kind === "date" ? [item.day] : [])),
        );
        const added = this.#parseItems(dates, now).filter(
          (item) => item.kind !== "date" || !held.has(item.day),
        );
        await this.#store(
          owner,
          name,
          [...calendar.items, ...added],
          { ...holidays, throughYear: through },
          now,
        );
        extended.push({ owner, name, throughYear: through });
      } catch (error) {
        failed.push({ owner, name, error });
      }
    }
    return { extended, failed };
  }

  #parseItems(input: readonly unknown[], now: Instant): CalendarItem[] {
    const { items, errors } = parseCalendarItems(input, "items", Math.floor(now / DAY_MS));
    if (errors.length > 0) throw new ValidationError(errors);
    return items;
  }

  /**
   * Writes the calendar's items and holiday region (a new version unless both are unchanged), then
   * brings every task that names it to this version, and removes the versions no task references.
   */
  async #store(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    holidays: CalendarHolidays | null,
    now: Instant,
  ): Promise<PutCalendarResult> {
    if (items.length > MAX_EXCLUSION_ITEMS) {
      throw ValidationError.of(
        "items",
        `at most ${MAX_EXCLUSION_ITEMS} items a calendar, its holidays included (${items.length})`,
      );
    }
    const actor: Actor = { owner, admin: false };
    const repository = this.#repository();
    const [previous] = await repository.findCalendars(owner, [name]);
    const unchanged =
      previous !== undefined &&
      JSON.stringify(previous.holidays ?? null) === JSON.stringify(holidays) &&
      JSON.stringify(encodeCalendarItems(previous.items)) ===
        JSON.stringify(encodeCalendarItems(items));
    if (!unchanged) {
      await this.#checkTasks(
        actor,
        {
          owner,
          name,
          items,
          version: (previous?.version ?? 0) + 1,
          holidays,
          createdAt: previous?.createdAt ?? now,
          updatedAt: now,
        },
        now,
      );
    }
    const calendar = unchanged
      ? previous
      : await repository.putCalendar(
          owner,
          name,
          items,
          now,
          // Checked in the writing transaction (docs/security.md#quotas).
          calendarQuotaCheck((this.#deps.quotas ?? Quotas.UNLIMITED).of(owner)),
          holidays,
        );
    // Also after an unchanged put: it finishes the refreshes of a put that stopped half way.
    const { refreshed, held } = await this.#refreshTasks(actor, calendar, now);
    // The versions no task references any more (docs/storage.md#calendar-versions).
    await repository.pruneCalendarVersions(owner, name);
    return {
      calendar: {
        ...calendarView(calendar),
        tasks_refreshed: refreshed,
        warnings: held.map(({ task, stall }) => stallWarning(task, stall)),
      },
      created: previous === undefined,
    };
  }

  /**
   * The region and years of public holidays a put asks for, its years bounded; the calendar then
   * follows the region (docs/schedules.md#holidays). Null when the put names no holidays.
   * @throws validation_failed for years out of order or too many, or a server without a dataset
   */
  #holidayYears(
    request: HolidaysInput | undefined,
    now: Instant,
  ): { request: HolidayRequest; holidays: CalendarHolidays } | null {
    if (request === undefined) return null;
    this.#holidaySource();
    const fromYear = request.from_year ?? new Date(now).getUTCFullYear();
    const toYear = request.to_year ?? Math.min(9999, fromYear + HOLIDAY_HORIZON_YEARS);
    if (toYear < fromYear) {
      throw ValidationError.of("holidays.to_year", `must not be before from_year (${fromYear})`);
    }
    if (toYear - fromYear + 1 > MAX_HOLIDAY_YEARS) {
      throw ValidationError.of(
        "holidays.to_year",
        `at most ${MAX_HOLIDAY_YEARS} years of holidays in one put (from_year ${fromYear})`,
      );
    }
    return {
      request: { region: request.region, fromYear, toYear },
      holidays: { region: request.region, fromYear, throughYear: toYear },
    };
  }

  #holidaySource(): HolidaySource {
    const source = this.#deps.holidays;
    if (source === undefined) {
      throw ValidationError.of("holidays", "this server has no holiday dataset");
    }
    return source;
  }

  /** @throws calendar_in_use (naming a task) while a task's schedule names the calendar */
  async delete(actor: Actor, name: string): Promise<void> {
    const deleted = await this.#repository().deleteCalendar(actor.owner, name);
    if (!deleted) throw new NotFoundError("calendar", name);
  }

  /**
   * Refuses, before anything is written, a calendar that would take a task naming it over the
   * schedule limits (docs/security.md#bounded-work): more exclusion items than a schedule may hold,
   * or a next fire too expensive to search for. Each task is evaluated as its refresh will be.
   * @throws validation_failed, limit_exceeded (`schedule_work`) naming the task
   */
  async #checkTasks(actor: Actor, calendar: Calendar, now: Instant): Promise<void> {
    const scope: OwnerScope = { kind: "owner", owner: actor.owner };
    for (const id of await this.#repository().tasksUsingCalendar(actor.owner, calendar.name)) {
      await nextTurn();
      const task = await this.#deps.store.tasks.findTask(scope, id);
      if (task === null) continue;
      if (
        expandedExclusionItems(withCalendar(task.schedule, calendar)) > MAX_EXPANDED_EXCLUSION_ITEMS
      ) {
        throw ValidationError.of(
          "items",
          `task ${task.id} would exclude more than ${MAX_EXPANDED_EXCLUSION_ITEMS} items with its calendars expanded`,
        );
      }
      try {
        withWorkBudget(() => {
          const again = refreshCalendar(task, calendar, now);
          if (again !== null) exclusionStall(again.task);
        }, STORED_SCHEDULE_WORK_STEPS);
      } catch (error) {
        if (!(error instanceof LimitExceededError)) throw error;
        throw new LimitExceededError(
          error.limit,
          error.max,
          `task ${task.id} naming this calendar: ${error.message}`,
        );
      }
    }
  }

  /**
   * Brings each task naming `calendar` to its version, one row lock at a time; also says which of
   * them the calendar (with their other exclusions) holds still (exclusion-stall.ts).
   */
  async #refreshTasks(
    actor: Actor,
    calendar: Calendar,
    now: Instant,
  ): Promise<{ refreshed: number; held: { task: Task; stall: ExclusionStall }[] }> {
    const scope: OwnerScope = { kind: "owner", owner: actor.owner };
    const ids = await this.#repository().tasksUsingCalendar(actor.owner, calendar.name);
    let refreshed = 0;
    const held: { task: Task; stall: ExclusionStall }[] = [];
    for (const id of ids) {
      await nextTurn();
      try {
        const { changed, task } = await this.#deps.store.tasks.mutateTask(scope, id, (locked) => {
          const outcome = refreshCalendar(locked.task, calendar, now);
          if (outcome === null) return { result: () => ({ changed: false, task: locked.task }) };
          const result = () => ({ changed: true, task: outcome.task });
          return { task: outcome.task, newRuns: outcome.newRuns, result };
        });
        if (changed) refreshed++;
        // Outside the row lock: the search runs only for a task without a next fire.
        const stall = exclusionStall(task);
        if (stall !== null) held.push({ task, stall });
      } catch (error) {
        // Deleted meanwhile, or the calendar changed again: the later put refreshes it.
        if (error instanceof NotFoundError || error instanceof CalendarChangedError) continue;
        throw error;
      }
    }
    if (refreshed > 0) this.#deps.wake();
    return { refreshed, held };
  }

  #repository(): CalendarRepository {
    const calendars = this.#deps.store.calendars;
    if (calendars === undefined) {
      throw ValidationError.of("calendar", `the ${this.#deps.store.kind} store keeps no calendars`);
    }
    return calendars;
  }
}
