/**
 * What the storage ports' reads take and return (docs/architecture.md#ports): the owner scope every read
 * and write is held to (one owner's rows, or every owner's for admin tokens and the coordinator), a page
 * with its cursor, and the task and run listings' filters.
 */
import type { OwnerId, TaskId, ThreadId } from "../ids.js";
import type { RunStatus, RunTrigger } from "../run.js";
import type { TargetKind } from "../target.js";
import type { TaskStatus } from "../task.js";
import type { Instant } from "../time.js";

/** Whose rows a call may see: one owner's, or every owner's (admin tokens, the coordinator). */
export type OwnerScope =
  { readonly kind: "owner"; readonly owner: OwnerId } | { readonly kind: "all" };

/** A page of results with an opaque cursor for the next one (null on the last page). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

export interface TaskQuery {
  readonly status?: TaskStatus;
  readonly targetKind?: TargetKind;
  readonly thread?: { readonly threadScope?: string; readonly threadId: ThreadId };
  /** Only the task with this key (docs/semantics.md#task-keys). */
  readonly key?: string;
  /** Only the tasks of this declared-schedules group. */
  readonly group?: string;
  /** Only the tasks whose title contains this text (ignoring case) or whose key is this text. */
  readonly search?: string;
  /**
   * Newest first (`created_at, id` descending) rather than oldest first: what a listing that shows
   * only the newest reads, without walking the rest. A cursor continues the order it was made in.
   */
  readonly newestFirst?: boolean;
  /** Page size, 1..200. */
  readonly limit: number;
  readonly cursor?: string;
}

export interface RunQuery {
  readonly status?: RunStatus;
  readonly trigger?: RunTrigger;
  readonly limit: number;
  readonly cursor?: string;
}

/**
 * Runs across an owner's tasks (docs/api.md `GET /v1/runs`), newest first (`scheduled_for, id`
 * descending). Every filter is optional; given together they all hold. Instants: `*After` inclusive,
 * `*Before` exclusive.
 */
export interface RunSearch {
  /** Any of these statuses; absent or empty: every status. */
  readonly statuses?: readonly RunStatus[];
  readonly taskId?: TaskId;
  /** The kind of the task's target when the run was written. */
  readonly targetKind?: TargetKind;
  readonly trigger?: RunTrigger;
  readonly late?: boolean;
  readonly scheduledAfter?: Instant;
  readonly scheduledBefore?: Instant;
  /** Only ended runs finished in the range. */
  readonly finishedAfter?: Instant;
  readonly finishedBefore?: Instant;
  /** Page size, 1..200. */
  readonly limit: number;
  readonly cursor?: string;
}
