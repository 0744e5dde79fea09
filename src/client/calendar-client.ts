/**
 * `client.calendars`: the owner's named calendars (docs/schedules.md#calendars), as the library's
 * `scheduler.calendars`: the days to skip that schedules name in `exclude` as `{calendar: NAME}`.
 */
import type { CalendarItemInput } from "../domain/schedule/schedule-spec.js";
import type { HolidaysInput } from "../application/shapes/schedule-input.js";
import type { CalendarView, PutCalendarView } from "../application/shapes/view-mappers.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";

export class CalendarClient {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** @throws PunctualApiError `not_found` (404) when the owner has no calendar of that name */
  get(name: string, options: CallOptions = {}): Promise<CalendarView> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "calendars", name],
      signal: options.signal,
    });
  }

  /** Every calendar of the owner, by name. */
  list(options: CallOptions = {}): Promise<{ items: CalendarView[] }> {
    return this.#http.json({ method: "GET", path: ["v1", "calendars"], signal: options.signal });
  }

  /**
   * Creates the calendar or replaces its items (`"2026-12-25"`, `{from, to}`, `{days: "25 12 *"}`);
   * the tasks naming it take them for their occurrences not decided yet (`tasks_refreshed` says how
   * many; `warnings` names each task it leaves with no fire at all,
   * docs/schedules.md#when-everything-left-is-excluded).
   * `options.holidays` adds a region's public holidays as dates (docs/schedules.md#holidays).
   * @throws PunctualApiError `validation_failed` (422) naming each bad item (`items.0`, ...)
   */
  put(
    name: string,
    items: readonly CalendarItemInput[],
    options: CallOptions & { readonly holidays?: HolidaysInput } = {},
  ): Promise<PutCalendarView> {
    return this.#http.json({
      method: "PUT",
      path: ["v1", "calendars", name],
      body: options.holidays === undefined ? { items } : { items, holidays: options.holidays },
      signal: options.signal,
    });
  }

  /**
   * Deletes the calendar.
   * @throws PunctualApiError `calendar_in_use` (409) while a task's schedule names it (`task_id` names
   * one), `not_found` (404) when the owner has no calendar of that name
   */
  async delete(name: string, options: CallOptions = {}): Promise<void> {
    await this.#http.send({
      method: "DELETE",
      path: ["v1", "calendars", name],
      signal: options.signal,
    });
  }
}
