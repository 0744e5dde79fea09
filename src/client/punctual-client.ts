/**
 * `PunctualClient`: the API as sub-clients (`tasks`, `runs`, `schedules`, `calendars`) sharing one
 * transport, plus the health and readiness probes.
 */
import { CalendarClient } from "./calendar-client.js";
import { HttpTransport } from "./http-transport.js";
import type { CallOptions, ClientOptions } from "./http-transport.js";
import { RunClient } from "./run-client.js";
import { ScheduleClient } from "./schedule-client.js";
import { TaskClient } from "./task-client.js";

export class PunctualClient {
  /** Tasks: create, read, list, edit, pause, resume, cancel, trigger, backfill, delete, preview, explain. */
  readonly tasks: TaskClient;
  /** Runs: read and cancel one. */
  readonly runs: RunClient;
  /** A schedule's next fires before any task has it. */
  readonly schedules: ScheduleClient;
  /** Named calendars, the days to skip that schedules name in `exclude`: read, list, put, delete. */
  readonly calendars: CalendarClient;
  readonly #http: HttpTransport;

  constructor(options: ClientOptions) {
    this.#http = new HttpTransport(options);
    this.tasks = new TaskClient(this.#http);
    this.runs = new RunClient(this.#http);
    this.schedules = new ScheduleClient(this.#http);
    this.calendars = new CalendarClient(this.#http);
  }

  /** Liveness: resolves when the process answers (no token needed). */
  health(options: CallOptions = {}): Promise<{ status: string }> {
    return this.#http.json({ method: "GET", path: ["healthz"], signal: options.signal });
  }

  /**
   * Readiness: the database is reachable, migrations are current, and the server is not stopping.
   * @throws PunctualApiError `not_ready` (503) saying which
   */
  ready(options: CallOptions = {}): Promise<{ status: string }> {
    return this.#http.json({ method: "GET", path: ["readyz"], signal: options.signal });
  }
}
