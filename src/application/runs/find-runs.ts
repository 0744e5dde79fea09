/**
 * Reading runs: one run of the owner's, one task's runs, and runs across tasks (docs/api.md
 * `GET /v1/runs`), whose filters in their public (snake_case) shape are mapped to the store's search
 * once, here, for the library and the HTTP API alike.
 */
import { NotFoundError, ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import type { RunId } from "../../domain/ids.js";
import { taskId as toTaskId } from "../../domain/ids.js";
import type { RunQuery, RunSearch } from "../../domain/ports/queries.js";
import { RUN_STATUSES, RUN_TRIGGERS } from "../../domain/run.js";
import type { Run, RunStatus, RunTrigger } from "../../domain/run.js";
import { parseInstantText } from "../../domain/schedule/iso-text.js";
import { TARGET_KINDS } from "../../domain/target.js";
import type { TargetKind } from "../../domain/target.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import { scopeOf } from "../access/actor.js";
import type { Actor } from "../access/actor.js";
import { pageSizeOf } from "../policy/limits.js";
import { runView } from "../shapes/view-mappers.js";
import type { PageView, RunView } from "../shapes/view-mappers.js";
import type { TaskRunDeps } from "./manual-runs.js";
import type { RunOperationDeps } from "./redrive-run.js";

/**
 * Filters of `runs.list` (`GET /v1/runs`), as the HTTP API's query string; every one optional, all of
 * them together narrowing. Instants are RFC 3339; `*_after` is inclusive, `*_before` exclusive.
 */
export interface RunSearchQuery {
  /** One status or several (any of them). */
  readonly status?: RunStatus | readonly RunStatus[] | undefined;
  readonly task_id?: string | undefined;
  /** The kind of the task's target when the run was written. */
  readonly target_kind?: TargetKind | undefined;
  readonly trigger?: RunTrigger | undefined;
  readonly late?: boolean | undefined;
  readonly scheduled_after?: string | undefined;
  readonly scheduled_before?: string | undefined;
  /** Only ended runs finished at or after this instant. */
  readonly finished_after?: string | undefined;
  readonly finished_before?: string | undefined;
  /** 1..200. @default 50 */
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

function oneOf<T extends string>(
  values: readonly T[],
  value: unknown,
  field: string,
  errors: FieldError[],
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as T;
  errors.push({ field, message: `must be one of ${values.join(", ")}` });
  return undefined;
}

function instantOf(value: unknown, field: string, errors: FieldError[]): Instant | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" ? parseInstantText(value) : null;
  if (parsed?.ok === true) return parsed.value as Instant;
  errors.push({ field, message: parsed?.problem ?? "must be an RFC 3339 instant" });
  return undefined;
}

function statusesOf(value: unknown, errors: FieldError[]): RunStatus[] | undefined {
  if (value === undefined) return undefined;
  const list: unknown[] = Array.isArray(value) ? value : [value];
  const statuses = list.map((entry) => oneOf(RUN_STATUSES, entry, "status", errors));
  return statuses.filter((status) => status !== undefined);
}

function checkRange(
  from: Instant | undefined,
  to: Instant | undefined,
  field: string,
  errors: FieldError[],
): void {
  if (from !== undefined && to !== undefined && !(from < to)) {
    errors.push({ field, message: `must be after ${field.replace("_before", "_after")}` });
  }
}

/**
 * The store's search for `query`.
 * @throws validation_failed naming each bad filter (`status`, `scheduled_after`, ...)
 * @throws limit_exceeded for a page size outside 1..200
 */
export function runSearchOf(query: RunSearchQuery): RunSearch {
  const errors: FieldError[] = [];
  const statuses = statusesOf(query.status, errors);
  const targetKind = oneOf(TARGET_KINDS, query.target_kind, "target_kind", errors);
  const trigger = oneOf(RUN_TRIGGERS, query.trigger, "trigger", errors);
  if (query.late !== undefined && typeof query.late !== "boolean") {
    errors.push({ field: "late", message: "must be true or false" });
  }
  if (query.task_id !== undefined && (typeof query.task_id !== "string" || query.task_id === "")) {
    errors.push({ field: "task_id", message: "must be a task id" });
  }
  const scheduledAfter = instantOf(query.scheduled_after, "scheduled_after", errors);
  const scheduledBefore = instantOf(query.scheduled_before, "scheduled_before", errors);
  const finishedAfter = instantOf(query.finished_after, "finished_after", errors);
  const finishedBefore = instantOf(query.finished_before, "finished_before", errors);
  checkRange(scheduledAfter, scheduledBefore, "scheduled_before", errors);
  checkRange(finishedAfter, finishedBefore, "finished_before", errors);
  if (errors.length > 0) throw new ValidationError(errors);
  return {
    limit: pageSizeOf(query.limit),
    ...(statuses === undefined || statuses.length === 0 ? {} : { statuses }),
    ...(query.task_id === undefined ? {} : { taskId: toTaskId(query.task_id) }),
    ...(targetKind === undefined ? {} : { targetKind }),
    ...(trigger === undefined ? {} : { trigger }),
    ...(typeof query.late === "boolean" ? { late: query.late } : {}),
    ...(scheduledAfter === undefined ? {} : { scheduledAfter }),
    ...(scheduledBefore === undefined ? {} : { scheduledBefore }),
    ...(finishedAfter === undefined ? {} : { finishedAfter }),
    ...(finishedBefore === undefined ? {} : { finishedBefore }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

/** One page of the runs `actor` sees, across tasks, newest first. */
export async function searchRuns(
  deps: RunOperationDeps,
  actor: Actor,
  search: RunSearch,
): Promise<PageView<RunView>> {
  const page = await deps.store.runs.searchRuns(scopeOf(actor), search);
  return { items: page.items.map(runView), next_cursor: page.nextCursor };
}

/** One page of `task`'s runs (the caller found the task in the actor's scope). */
export async function listTaskRuns(
  deps: TaskRunDeps,
  actor: Actor,
  task: Task,
  query: RunQuery,
): Promise<PageView<RunView>> {
  const page = await deps.store.runs.listRuns(scopeOf(actor), task.id, query);
  return { items: page.items.map(runView), next_cursor: page.nextCursor };
}

/** The actor's run `id`. @throws not_found for a missing run or another owner's */
export async function findRun(deps: TaskRunDeps, actor: Actor, id: string): Promise<Run> {
  const run = await deps.store.runs.findRun(scopeOf(actor), id as RunId);
  if (run === null) throw new NotFoundError("run", id);
  return run;
}
