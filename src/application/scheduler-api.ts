/**
 * The task, run and calendar operations in their public shapes (docs/library.md#tasks-and-runs):
 * snake_case inputs as the HTTP API takes them, views out. Each is mapped to a service call once, here:
 * the library's `scheduler.tasks`, `scheduler.runs` and `scheduler.calendars` are this module, and the
 * HTTP routes map their query strings and bodies through the same functions.
 */
import type { RotateSecretInput } from "./shapes/command-input.js";
import type { RotatedSecretView } from "./shapes/view-schemas.js";
import { threadId } from "../domain/ids.js";
import type { CatchUpPolicy } from "../domain/options.js";
import type { RunQuery, TaskQuery } from "../domain/ports/queries.js";
import type { CalendarQuery } from "../domain/ports/calendar-repository.js";
import type { RunStatus, RunTrigger } from "../domain/run.js";
import type { TargetKind } from "../domain/target.js";
import type { TaskStatus } from "../domain/task.js";
import type { Instant } from "../domain/time.js";
import type { CalendarItemInput } from "../domain/schedule/schedule-spec.js";
import type { HolidaysInput } from "./shapes/schedule-input.js";
import type { Actor } from "./access/actor.js";
import { DEFAULT_LIMITS, pageSizeOf } from "./policy/limits.js";
import { runSearchOf } from "./runs/find-runs.js";
import type { RunSearchQuery } from "./runs/find-runs.js";
import type { CreatedTask, TaskService, UpsertedTask } from "./tasks/task-service.js";
import type {
  HandlerInputMap,
  InputFor,
  TaskCreateInput,
  TaskPatchInput,
  TaskUpsertInput,
} from "./shapes/handler-input-types.js";
import type {
  CalendarView,
  ExplanationView,
  OccurrenceView,
  PageView,
  PutCalendarView,
  RunView,
  TaskView,
} from "./shapes/view-mappers.js";

/** A page's size when the caller gives none (limits.ts). */
export const PAGE_SIZE_DEFAULT = DEFAULT_LIMITS.pageSizeDefault;
/** The largest page a listing serves, in the library as in the HTTP API (limits.ts). */
export const PAGE_SIZE_MAX = DEFAULT_LIMITS.pageSizeMax;

/** Filters of `tasks.list`, as the HTTP API's query string (an `undefined` field is absent). */
export interface TaskListQuery {
  readonly status?: TaskStatus | undefined;
  readonly target_kind?: TargetKind | undefined;
  readonly thread_id?: string | undefined;
  /** Only the task with this key (docs/semantics.md#task-keys). */
  readonly key?: string | undefined;
  /** Only the tasks of this declared-schedules group (docs/library.md#declared-schedules). */
  readonly group?: string | undefined;
  /** Only the tasks whose title contains this text (ignoring case) or whose key is this text. */
  readonly search?: string | undefined;
  /** 1..200. @default 50 */
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/** Filters of `tasks.runs`, as the HTTP API's query string. */
export interface RunListQuery {
  readonly status?: RunStatus | undefined;
  readonly trigger?: RunTrigger | undefined;
  /** 1..200. @default 50 */
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/** Which page of `calendars.list`, as the HTTP API's query string. */
export interface CalendarListQuery {
  /** 1..200. @default 50 */
  readonly limit?: number | undefined;
  /** `next_cursor` of the previous page. */
  readonly cursor?: string | undefined;
}

/** The store query for a calendar listing. @throws limit_exceeded for a page size outside 1..200 */
export function calendarQueryOf(query: CalendarListQuery): CalendarQuery {
  return {
    limit: pageSizeOf(query.limit),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

/** The store query for a task listing. @throws limit_exceeded for a page size outside 1..200 */
export function taskQueryOf(query: TaskListQuery): TaskQuery {
  return {
    limit: pageSizeOf(query.limit),
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.target_kind === undefined ? {} : { targetKind: query.target_kind }),
    ...(query.thread_id === undefined ? {} : { thread: { threadId: threadId(query.thread_id) } }),
    ...(query.key === undefined ? {} : { key: query.key }),
    ...(query.group === undefined ? {} : { group: query.group }),
    ...(query.search === undefined ? {} : { search: query.search }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

/** The store query for a task's runs. @throws limit_exceeded for a page size outside 1..200 */
export function runQueryOf(query: RunListQuery): RunQuery {
  return {
    limit: pageSizeOf(query.limit),
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.trigger === undefined ? {} : { trigger: query.trigger }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

/** `pause`'s options. */
export interface PauseOptions {
  /** Ask launching and running runs to stop too. @default false */
  readonly cancel_running?: boolean | undefined;
}

/** `resume`'s options. */
export interface ResumeOptions {
  /** @default "none" */
  readonly catch_up?: CatchUpPolicy | undefined;
}

export function pauseOptionsOf(options: PauseOptions): { cancelRunning?: boolean } {
  return options.cancel_running === undefined ? {} : { cancelRunning: options.cancel_running };
}

export function resumeOptionsOf(options: ResumeOptions): { catchUp?: CatchUpPolicy } {
  return options.catch_up === undefined ? {} : { catchUp: options.catch_up };
}

/**
 * Task operations; inputs and outputs have the HTTP API's JSON shapes (snake_case). With typed handlers
 * (`I`, docs/library.md#typed-handlers) `create`, `upsert` and `update` check a handler target at
 * compile time.
 */
export interface SchedulerTasks<I extends HandlerInputMap | null = null> {
  create(input: InputFor<I, TaskCreateInput<I>>): Promise<CreatedTask>;
  /**
   * Creates every task of `inputs` (at most 1,000) or none, in one transaction; the answer is in input
   * order. A refusal names the item: `errors[].field` is `tasks[17].schedule.cron`.
   */
  createMany(inputs: readonly unknown[]): Promise<CreatedTask[]>;
  get(id: string): Promise<TaskView>;
  /**
   * The owner's task with this key (docs/semantics.md#task-keys).
   * @throws not_found when no task has it
   */
  getByKey(key: string): Promise<TaskView>;
  list(query?: TaskListQuery): Promise<PageView<TaskView>>;
  /**
   * Creates the task `input.key` names, or brings it to exactly this definition (PUT semantics: a field
   * left out takes its default); identical input changes nothing and keeps `version`. `created` says
   * which, `changed` lists the fields changed (docs/semantics.md#upsert). Never changes `status`.
   * `version` makes it a compare-and-set (the HTTP API's `If-Match`).
   * @example
   * await scheduler.tasks.upsert({ key: "billing:nightly", title: "Nightly invoices",
   *   schedule: { type: "cron", cron: "0 2 * * *", timezone: "Europe/Berlin" },
   *   target: { kind: "handler", name: "invoices" } });
   */
  upsert(
    input: InputFor<I, TaskUpsertInput<I>>,
    options?: { version?: number },
  ): Promise<UpsertedTask>;
  /** PATCH semantics; `version` makes it a compare-and-set (the HTTP API's `If-Match`). */
  update(
    id: string,
    patch: InputFor<I, TaskPatchInput<I>>,
    options?: { version?: number },
  ): Promise<CreatedTask>;
  pause(id: string, options?: PauseOptions): Promise<TaskView>;
  resume(id: string, options?: ResumeOptions): Promise<TaskView>;
  cancel(id: string): Promise<TaskView>;
  /** Run now; a repeat with the same `idempotency_key` returns the first run. */
  trigger(id: string, options?: { idempotency_key?: string }): Promise<RunView>;
  backfill(
    id: string,
    range: { from: string; to: string },
  ): Promise<{ runs: RunView[]; already_backfilled: number }>;
  /**
   * A new signing secret for the task, answered once; the replaced one still signs (beside it) and
   * opens callbacks for `grace` (docs/security.md#rotating-a-tasks-signing-secret).
   * @default grace PT24H (at most P7D)
   * @throws validation_failed naming `grace`
   */
  rotateSecret(id: string, options?: RotateSecretInput): Promise<RotatedSecretView>;
  /**
   * Deletes the task. A run launching or running refuses it (`task_not_mutable`) unless `force` (the
   * run is asked to stop) or `after_run` (the run finishes; the task is gone at once and admits
   * nothing, and its rows go when the run has ended).
   */
  delete(id: string, options?: { force?: boolean; after_run?: boolean }): Promise<void>;
  preview(id: string, count?: number): Promise<{ occurrences: OccurrenceView[] }>;
  /** Why the task did or did not fire around `at` (an RFC 3339 instant). */
  explain(id: string, at: string): Promise<ExplanationView>;
  runs(id: string, query?: RunListQuery): Promise<PageView<RunView>>;
}

/** Run operations. */
export interface SchedulerRuns {
  get(id: string): Promise<RunView>;
  cancel(id: string): Promise<RunView>;
  /**
   * One page of runs across the owner's tasks, newest first (`scheduled_for`, then id), the HTTP API's
   * `GET /v1/runs`. Every filter is optional and they narrow together.
   * @throws validation_failed naming a bad filter (`status`, `scheduled_after`, ...) or cursor
   * @example
   * // What failed in the last hour?
   * const since = new Date(Date.now() - 3_600_000).toISOString();
   * const page = await scheduler.runs.list({ status: ["failed", "timed_out"], finished_after: since });
   */
  list(query?: RunSearchQuery): Promise<PageView<RunView>>;
  /**
   * Redrive (docs/semantics.md#redrive): puts a `failed`, `timed_out` or `cancelled` run back in the
   * queue, the same run with the same idempotency key, as its next attempt; allowed past
   * `max_attempts`. The overlap policy acts on it as on a manual trigger.
   * @throws not_found for a missing run or another owner's
   * @throws illegal_transition for any other status (the message says why)
   * @throws run_active under overlap `skip` while the task has an active run
   */
  retry(id: string): Promise<RunView>;
}

/**
 * Named calendars: lists of days to skip that schedules name in `exclude` as `{calendar: NAME}`
 * (docs/schedules.md#calendars). Items are those of `exclude` except calendars: `"2026-12-25"`,
 * `{from, to}`, `{days: "25 12 *"}`.
 */
export interface SchedulerCalendars {
  /** @throws not_found when the owner has no calendar of that name */
  get(name: string): Promise<CalendarView>;
  /**
   * A page of the owner's calendars, by name (`next_cursor` null on the last page).
   * @throws limit_exceeded (`page_size`) for a page size outside 1..200
   */
  list(query?: CalendarListQuery): Promise<PageView<CalendarView>>;
  /**
   * Creates the calendar or replaces its items; the tasks naming it take them for their occurrences
   * not decided yet (`tasks_refreshed` says how many); `warnings` names each task it leaves with no
   * fire at all (docs/schedules.md#when-everything-left-is-excluded).
   * `options.holidays` adds a region's public holidays of the years asked as dates
   * (docs/schedules.md#holidays), e.g. `{ holidays: { region: "DE-BY" } }` for this year and the 9 after;
   * the calendar then follows the region (`holidays` in its view) and the runtime adds later years'
   * holidays as years pass. A put without `holidays` drops the region.
   * @throws validation_failed naming each bad item, or an unknown region (`holidays.region`)
   */
  put(
    name: string,
    items: readonly CalendarItemInput[],
    options?: { readonly holidays?: HolidaysInput },
  ): Promise<PutCalendarView>;
  /**
   * @throws not_found when the owner has no calendar of that name
   * @throws calendar_in_use (naming a task) while a task's schedule names it
   */
  delete(name: string): Promise<void>;
}

/** What the operations run on, once the store is open. */
export interface ApiServices {
  readonly tasks: TaskService;
  readonly clock: { now(): Instant };
}

/**
 * The operations as `actor`, on the services `open` resolves to (the store opens on first use). `I`
 * narrows only what compiles: every input is validated at run time whatever its type.
 */
export function schedulerApi<I extends HandlerInputMap | null = null>(
  actor: Actor,
  open: () => Promise<ApiServices>,
): {
  readonly tasks: SchedulerTasks<I>;
  readonly runs: SchedulerRuns;
  readonly calendars: SchedulerCalendars;
} {
  const use = async <T>(call: (services: ApiServices, now: () => Instant) => Promise<T>) => {
    const services = await open();
    return call(services, () => services.clock.now());
  };
  return {
    tasks: {
      create: (input) => use(({ tasks }, now) => tasks.create(actor, input, now())),
      createMany: (inputs) => use(({ tasks }, now) => tasks.createMany(actor, inputs, now())),
      get: (id) => use(({ tasks }) => tasks.get(actor, id)),
      getByKey: (key) => use(({ tasks }) => tasks.getByKey(actor, key)),
      upsert: (input, options = {}) =>
        use(({ tasks }, now) => tasks.upsert(actor, input, options.version ?? null, now())),
      list: (query = {}) => use(({ tasks }) => tasks.list(actor, taskQueryOf(query))),
      update: (id, patch, options = {}) =>
        use(({ tasks }, now) => tasks.update(actor, id, patch, options.version ?? null, now())),
      pause: (id, options = {}) =>
        use(({ tasks }, now) => tasks.pause(actor, id, pauseOptionsOf(options), now())),
      resume: (id, options = {}) =>
        use(({ tasks }, now) => tasks.resume(actor, id, resumeOptionsOf(options), now())),
      cancel: (id) => use(({ tasks }, now) => tasks.cancel(actor, id, now())),
      trigger: (id, options = {}) =>
        use(({ tasks }, now) =>
          tasks.trigger(
            actor,
            id,
            options.idempotency_key === undefined
              ? {}
              : { idempotencyKey: options.idempotency_key },
            now(),
          ),
        ),
      backfill: (id, range) => use(({ tasks }, now) => tasks.backfill(actor, id, range, now())),
      rotateSecret: (id, options = {}) =>
        use(({ tasks }, now) => tasks.rotateSecret(actor, id, options, now())),
      delete: (id, options = {}) =>
        use(({ tasks }, now) =>
          tasks.delete(
            actor,
            id,
            {
              ...(options.force === undefined ? {} : { force: options.force }),
              ...(options.after_run === undefined ? {} : { afterRun: options.after_run }),
            },
            now(),
          ),
        ),
      preview: (id, count = 10) => use(({ tasks }, now) => tasks.preview(actor, id, count, now())),
      explain: (id, at) => use(({ tasks }, now) => tasks.explain(actor, id, at, now())),
      runs: (id, query = {}) => use(({ tasks }) => tasks.listRuns(actor, id, runQueryOf(query))),
    },
    runs: {
      get: (id) => use(({ tasks }) => tasks.getRun(actor, id)),
      cancel: (id) => use(({ tasks }, now) => tasks.cancelRun(actor, id, now())),
      list: (query = {}) => use(({ tasks }) => tasks.searchRuns(actor, runSearchOf(query))),
      retry: (id) => use(({ tasks }, now) => tasks.redriveRun(actor, id, now())),
    },
    calendars: {
      get: (name) => use(({ tasks }) => tasks.calendars.get(actor, name)),
      list: (query = {}) => use(({ tasks }) => tasks.calendars.list(actor, calendarQueryOf(query))),
      put: (name, items, options = {}) =>
        use(async ({ tasks }, now) => {
          const body = options.holidays === undefined ? { items } : { items, ...options };
          const result = await tasks.calendars.put(actor, name, body, now());
          return result.calendar;
        }),
      delete: (name) => use(({ tasks }) => tasks.calendars.delete(actor, name)),
    },
  };
}
