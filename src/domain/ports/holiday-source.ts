/** The holiday source port (docs/schedules.md#holidays): a region's public holidays, from a bundled dataset. */

/** Which region's public holidays a calendar put adds, and for which years (both included). */
export interface HolidayRequest {
  /** `DE`, `DE-BY`, `US-CA`, `CH-ZH-...`: a country (ISO 3166-1) and, optionally, its state and region. */
  readonly region: string;
  readonly fromYear: number;
  readonly toYear: number;
}

/**
 * A region's public holidays. Implemented by an adapter around a dataset it bundles (no network); the
 * domain and the application never load the dataset themselves.
 */
export interface HolidaySource {
  /**
   * The local dates (`YYYY-MM-DD`) of the region's public holidays (substitute days included) in the
   * years asked, sorted, without duplicates.
   * @throws validation_failed (`holidays.region`) for a region the dataset does not know
   */
  publicHolidays(request: HolidayRequest): Promise<readonly string[]>;
}
