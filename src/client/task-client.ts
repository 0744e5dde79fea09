/**
 * `client.tasks`: the owner's operations on tasks (docs/api.md), with the inputs and answers of the
 * library's `scheduler.tasks` (the same snake_case shapes), over HTTP.
 */
import type { CreatedTask, UpsertedTask } from "../application/tasks/task-service.js";
import type {
  BackfillInput,
  PauseInput,
  ResumeInput,
  RotateSecretInput,
  RunListFilters,
  TaskListFilters,
} from "../application/shapes/command-input.js";
import type {
  TaskCreateInput,
  TaskPatchInput,
  TaskUpsertInput,
} from "../application/shapes/task-input.js";
import type {
  BackfillResultView,
  PreviewView,
  RotatedSecretView,
} from "../application/shapes/view-schemas.js";
import type {
  ExplanationView,
  PageView,
  RunView,
  TaskView,
} from "../application/shapes/view-mappers.js";
import { ifMatch } from "./http-transport.js";
import type { CallOptions, HttpTransport } from "./http-transport.js";
import { pagesOf } from "./pages.js";
import type { PageQuery } from "./pages.js";

/** Filters and page of `tasks.list`. */
export type TaskListQuery = TaskListFilters & PageQuery;
/** Filters and page of `tasks.runs`. */
export type RunListQuery = RunListFilters & PageQuery;

/** Options of the calls that take an `Idempotency-Key`. */
export interface IdempotentCallOptions extends CallOptions {
  /** A repeat with the same key answers the first call's answer (one task, one run). */
  readonly idempotency_key?: string | undefined;
}

export class TaskClient {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /**
   * Creates a task; `warnings` says what DST or jitter will do to it.
   * @throws PunctualApiError `validation_failed` (422) naming each bad field
   */
  create(input: TaskCreateInput, options: IdempotentCallOptions = {}): Promise<CreatedTask> {
    return this.#http.json({
      method: "POST",
      path: ["v1", "tasks"],
      body: input,
      headers: { "idempotency-key": options.idempotency_key },
      signal: options.signal,
    });
  }

  /**
   * Creates up to 1,000 tasks in one request, all or none; the answer is in input order.
   * @throws PunctualApiError `validation_failed` (422) naming each bad field by its item,
   * `tasks[17].schedule.cron`
   */
  async createMany(
    inputs: readonly TaskCreateInput[],
    options: IdempotentCallOptions = {},
  ): Promise<CreatedTask[]> {
    const answer: { tasks: CreatedTask[] } = await this.#http.json({
      method: "POST",
      path: ["v1", "tasks", "batch"],
      body: { tasks: inputs },
      headers: { "idempotency-key": options.idempotency_key },
      signal: options.signal,
    });
    return answer.tasks;
  }

  /** @throws PunctualApiError `not_found` (404), also for another owner's task */
  get(id: string, options: CallOptions = {}): Promise<TaskView> {
    return this.#http.json({ method: "GET", path: ["v1", "tasks", id], signal: options.signal });
  }

  /** @throws PunctualApiError `not_found` (404) when the caller has no task with this key */
  getByKey(key: string, options: CallOptions = {}): Promise<TaskView> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "tasks", "by-key", key],
      signal: options.signal,
    });
  }

  /**
   * Creates the task with `input.key` (`created: true`, HTTP 201) or brings it to exactly this
   * definition (`changed` names the fields; empty, and no new version, when it already matched).
   * `version` sends `If-Match`. See docs/semantics.md#upsert.
   */
  upsert(
    input: TaskUpsertInput,
    options: CallOptions & {
      readonly version?: number | undefined;
      /** Check and answer what it would do, writing nothing. */
      readonly dryRun?: boolean | undefined;
    } = {},
  ): Promise<UpsertedTask> {
    const { key, ...body } = input;
    return this.#http.json({
      method: "PUT",
      path: ["v1", "tasks", "by-key", key],
      ...(options.dryRun === true ? { query: { dry_run: "true" } } : {}),
      body,
      headers: { "if-match": ifMatch(options.version) },
      signal: options.signal,
    });
  }

  /** One page of the caller's tasks, in a stable order. */
  list(query: TaskListQuery = {}, options: CallOptions = {}): Promise<PageView<TaskView>> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "tasks"],
      query: { ...query },
      signal: options.signal,
    });
  }

  /**
   * Every page of the list, fetched as the loop asks for it.
   * @example
   * ```ts
   * for await (const page of client.tasks.pages({ status: "paused" }))
   *   for (const task of page.items) console.log(task.title);
   * ```
   */
  pages(query: TaskListQuery = {}, options: CallOptions = {}): AsyncGenerator<PageView<TaskView>> {
    return pagesOf(query.cursor, (cursor) => this.list({ ...query, cursor }, options));
  }

  /**
   * Edits a task (PATCH: fields left out keep their value). With `version` (the `version` read, also
   * its ETag) the edit is a compare-and-set (`If-Match`); without it, it applies to any version.
   * @throws PunctualApiError `version_conflict` (409) when the task changed since `version`
   */
  update(
    id: string,
    patch: TaskPatchInput,
    options: CallOptions & { readonly version?: number | undefined } = {},
  ): Promise<CreatedTask> {
    return this.#http.json({
      method: "PATCH",
      path: ["v1", "tasks", id],
      body: patch,
      headers: { "if-match": ifMatch(options.version) },
      signal: options.signal,
    });
  }

  /** No new occurrences; queued runs are cancelled (a launched one too, with `cancel_running`). */
  pause(id: string, options: PauseInput & CallOptions = {}): Promise<TaskView> {
    const { signal, ...body } = options;
    return this.#command(id, "pause", body, signal);
  }

  /** Occurrences inside the pause follow `catch_up` (default `none`). */
  resume(id: string, options: ResumeInput & CallOptions = {}): Promise<TaskView> {
    const { signal, ...body } = options;
    return this.#command(id, "resume", body, signal);
  }

  /** Cancels the task (terminal); queued runs are cancelled. */
  cancel(id: string, options: CallOptions = {}): Promise<TaskView> {
    return this.#command(id, "cancel", undefined, options.signal);
  }

  /**
   * Runs the task now: the manual run is queued and the call answers at once.
   * @throws PunctualApiError `run_active` (409) when a run is active under overlap `skip`
   */
  trigger(id: string, options: IdempotentCallOptions = {}): Promise<RunView> {
    return this.#http.json({
      method: "POST",
      path: ["v1", "tasks", id, "trigger"],
      headers: { "idempotency-key": options.idempotency_key },
      signal: options.signal,
    });
  }

  /** Replays the nominal times in `[from, to)` as backfill runs (at most 1,000). */
  backfill(
    id: string,
    range: BackfillInput,
    options: CallOptions = {},
  ): Promise<BackfillResultView> {
    return this.#command(id, "backfill", range, options.signal);
  }

  /**
   * A new signing secret, answered once; the replaced one still signs and opens callbacks for `grace`
   * (docs/security.md#rotating-a-tasks-signing-secret). @default grace PT24H (at most P7D)
   */
  rotateSecret(
    id: string,
    input: RotateSecretInput = {},
    options: CallOptions = {},
  ): Promise<RotatedSecretView> {
    return this.#command(id, "rotate-secret", input, options.signal);
  }

  /**
   * Deletes the task (with `version`, only that version of it).
   * @throws PunctualApiError `task_not_mutable` (409) while a run is launching or running, unless `force`
   */
  async delete(
    id: string,
    options: CallOptions & {
      readonly force?: boolean | undefined;
      /** Let a launching or running run finish; the task is deleted at once, its rows after the run. */
      readonly afterRun?: boolean | undefined;
      readonly version?: number | undefined;
    } = {},
  ): Promise<void> {
    await this.#http.send({
      method: "DELETE",
      path: ["v1", "tasks", id],
      query: {
        force: options.force === true ? "true" : undefined,
        after_run: options.afterRun === true ? "true" : undefined,
      },
      headers: { "if-match": options.version === undefined ? undefined : ifMatch(options.version) },
      signal: options.signal,
    });
  }

  /** The next `count` fires (1..100, default 10) with their wall times and what DST does to them. */
  preview(id: string, count?: number, options: CallOptions = {}): Promise<PreviewView> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "tasks", id, "preview"],
      query: { count },
      signal: options.signal,
    });
  }

  /** Why the task did or did not fire around `at` (an RFC 3339 instant). */
  explain(id: string, at: string, options: CallOptions = {}): Promise<ExplanationView> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "tasks", id, "explain"],
      query: { at },
      signal: options.signal,
    });
  }

  /** One page of the task's runs, newest first. */
  runs(
    id: string,
    query: RunListQuery = {},
    options: CallOptions = {},
  ): Promise<PageView<RunView>> {
    return this.#http.json({
      method: "GET",
      path: ["v1", "tasks", id, "runs"],
      query: { ...query },
      signal: options.signal,
    });
  }

  /** Every page of the task's runs, fetched as the loop asks for it. */
  runPages(
    id: string,
    query: RunListQuery = {},
    options: CallOptions = {},
  ): AsyncGenerator<PageView<RunView>> {
    return pagesOf(query.cursor, (cursor) => this.runs(id, { ...query, cursor }, options));
  }

  #command<T>(
    id: string,
    command: "pause" | "resume" | "cancel" | "backfill" | "rotate-secret",
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    return this.#http.json({ method: "POST", path: ["v1", "tasks", id, command], body, signal });
  }
}
