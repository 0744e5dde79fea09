/**
 * `client.runs`: runs across tasks, read, cancel and redrive one run (docs/api.md), as the library's
 * `scheduler.runs`.
 */
import type { RunSearchQuery } from "../application/runs/find-runs.js";
import type { PageView, RunView } from "../application/shapes/view-mappers.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";
import { pagesOf } from "./pages.js";

/** The filters of `runs.list` (`GET /v1/runs`), with the page's `limit` and `cursor`. */
export type RunSearchFilters = RunSearchQuery;

export class RunClient {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** @throws PunctualApiError `not_found` (404), also for another owner's run */
  get(id: string, options: CallOptions = {}): Promise<RunView> {
    return this.#http.json({ method: "GET", path: ["v1", "runs", id], signal: options.signal });
  }

  /**
   * One page of runs across the caller's tasks, newest first.
   * @throws PunctualApiError `validation_failed` (422) naming a bad filter
   * @example
   * const failed = await client.runs.list({ status: ["failed", "timed_out"], finished_after: since });
   */
  list(query: RunSearchFilters = {}, options: CallOptions = {}): Promise<PageView<RunView>> {
    const { status, ...rest } = query;
    return this.#http.json({
      method: "GET",
      path: ["v1", "runs"],
      query: { ...rest, status: typeof status === "string" ? [status] : status },
      signal: options.signal,
    });
  }

  /** Every page of `list`, fetched as the loop asks for it. */
  pages(
    query: RunSearchFilters = {},
    options: CallOptions = {},
  ): AsyncGenerator<PageView<RunView>> {
    return pagesOf(query.cursor, (cursor) => this.list({ ...query, cursor }, options));
  }

  /**
   * Cancels a run; a launched one is asked to stop.
   * @throws PunctualApiError `illegal_transition` (409) when the run has ended
   */
  cancel(id: string, options: CallOptions = {}): Promise<RunView> {
    return this.#http.json({
      method: "POST",
      path: ["v1", "runs", id, "cancel"],
      signal: options.signal,
    });
  }

  /**
   * Redrive: puts a failed, timed-out or cancelled run back in the queue as its next attempt
   * (docs/semantics.md#redrive).
   * @throws PunctualApiError `illegal_transition` (409) for any other status, `run_active` (409) under
   * overlap `skip` while the task has an active run, `not_found` (404)
   */
  retry(id: string, options: CallOptions = {}): Promise<RunView> {
    return this.#http.json({
      method: "POST",
      path: ["v1", "runs", id, "retry"],
      signal: options.signal,
    });
  }
}
