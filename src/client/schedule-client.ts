/**
 * `client.schedules`: a schedule's next fires before any task has it (docs/api.md); writes nothing.
 */
import type { TaskCreateInput } from "../application/shapes/task-input.js";
import type { PreviewView } from "../application/shapes/view-schemas.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";

export class ScheduleClient {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /**
   * The next `count` fires (1..100, default 10) of `schedule`, parsed exactly as creating a task would.
   * @throws PunctualApiError `validation_failed` (422) naming each bad field
   */
  preview(
    schedule: TaskCreateInput["schedule"],
    count?: number,
    options: CallOptions = {},
  ): Promise<PreviewView> {
    return this.#http.json({
      method: "POST",
      path: ["v1", "schedules", "preview"],
      query: { count },
      body: { schedule },
      signal: options.signal,
    });
  }
}
