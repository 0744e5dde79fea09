/**
 * `HolidaySource` over the `date-holidays` package (ISC; its data CC-BY-3.0, docs/schedules.md#holidays):
 * public holidays of a country, state or region from the dataset it bundles. The package (about 1 s
 * and several MB to load) is imported on the first request only, so no process pays for it unless a
 * calendar asks for holidays.
 */
import type HolidaysType from "date-holidays";
import { ValidationError } from "../../domain/errors.js";
import type { HolidayRequest, HolidaySource } from "../../domain/ports/holiday-source.js";

type HolidaysClass = typeof HolidaysType;

const REGION = /^([A-Za-z]{2})(?:-([A-Za-z0-9]{1,10}))?(?:-([A-Za-z0-9]{1,10}))?$/;

export class DateHolidaysSource implements HolidaySource {
  #loading: Promise<HolidaysClass> | null = null;

  async publicHolidays(request: HolidayRequest): Promise<readonly string[]> {
    const Holidays = await this.#load();
    const holidays = new Holidays();
    const parts = regionParts(holidays, request.region);
    holidays.init(...parts);
    const dates = new Set<string>();
    for (let year = request.fromYear; year <= request.toYear; year++) {
      for (const holiday of holidays.getHolidays(year)) {
        // `date` is the local start, "YYYY-MM-DD hh:mm:ss"; a public holiday starts at midnight.
        if (holiday.type === "public") dates.add(holiday.date.slice(0, 10));
      }
    }
    return [...dates].sort();
  }

  #load(): Promise<HolidaysClass> {
    this.#loading ??= import("date-holidays").then((module) => module.default);
    return this.#loading;
  }
}

/** `DE-BY` as the dataset's country, state and region codes, each checked against it. */
function regionParts(
  holidays: InstanceType<HolidaysClass>,
  region: string,
): [string] | [string, string] | [string, string, string] {
  const refuse = (why: string): never => {
    throw ValidationError.of("holidays.region", why);
  };
  const match = REGION.exec(region);
  if (match === null) {
    return refuse(
      `"${region}" is not a region: give a country code (ISO 3166-1, e.g. DE) and optionally its state and region (DE-BY)`,
    );
  }
  const country = (match[1] ?? "").toUpperCase();
  const state = match[2]?.toUpperCase();
  const sub = match[3]?.toUpperCase();
  if (!known(holidays.getCountries(), country)) {
    return refuse(`no public holidays are known for the country "${country}"`);
  }
  if (state === undefined) return [country];
  if (!known(holidays.getStates(country), state)) {
    return refuse(`no public holidays are known for "${country}-${state}"`);
  }
  if (sub === undefined) return [country, state];
  if (!known(holidays.getRegions(country, state), sub)) {
    return refuse(`no public holidays are known for "${country}-${state}-${sub}"`);
  }
  return [country, state, sub];
}

/** Whether the dataset's table of codes (typed as an object, undefined for a country without states) has `code`. */
function known(table: unknown, code: string): boolean {
  return typeof table === "object" && table !== null && Object.hasOwn(table, code);
}
