/**
 * `client.runs`: read and cancel one run (docs/api.md), as the library's `scheduler.runs`.
 */
import type { RunView } from "../application/views.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";

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
}
