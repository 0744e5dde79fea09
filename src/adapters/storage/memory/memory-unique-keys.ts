/**
 * The unique keys of the runs table, named as in the SQL schema, and which of them a run row holds. A run
 * keeps its occurrence key for life; its slot keys come and go as it launches and ends.
 */
import { threadKey } from "../../../domain/claim.js";
import type { RunId, TaskId } from "../../../domain/ids.js";
import type { Run } from "../../../domain/run.js";
import { holdsSlot } from "../../../domain/run.js";

/** The unique keys of the runs table, named as in the SQL schema. */
export const RUN_UNIQUE_KEYS = [
  "runs_scheduled_occurrence_uq",
  "runs_backfill_occurrence_uq",
  "runs_manual_key_uq",
  "runs_task_slot_uq",
  "runs_thread_slot_uq",
] as const;
export type RunUniqueKey = (typeof RUN_UNIQUE_KEYS)[number];

const SEPARATOR = "\u0000";

/** The keys identifying a run's occurrence or manual request; they never change once a run exists. */
function occurrenceKeysOf(run: Run): [RunUniqueKey, string][] {
  switch (run.trigger) {
    case "scheduled":
      return [["runs_scheduled_occurrence_uq", `${run.taskId}${SEPARATOR}${run.scheduledFor}`]];
    case "backfill":
      return [["runs_backfill_occurrence_uq", `${run.taskId}${SEPARATOR}${run.scheduledFor}`]];
    case "manual":
      return [["runs_manual_key_uq", manualKey(run.taskId, run.idempotencyKey)]];
  }
}

/** The slots a run holds while launching or running. */
function slotKeysOf(run: Run): [RunUniqueKey, string][] {
  if (!holdsSlot(run.status)) return [];
  const thread: [RunUniqueKey, string] = [
    "runs_thread_slot_uq",
    threadKey(run.threadScope, run.threadId),
  ];
  return run.exclusive ? [["runs_task_slot_uq", run.taskId], thread] : [thread];
}

function sameOccurrence(a: Run, b: Run): boolean {
  return (
    a.taskId === b.taskId &&
    a.trigger === b.trigger &&
    a.scheduledFor === b.scheduledFor &&
    a.idempotencyKey === b.idempotencyKey
  );
}

function sameSlots(a: Run, b: Run): boolean {
  const holds = holdsSlot(a.status);
  if (holds !== holdsSlot(b.status)) return false;
  return (
    !holds ||
    (a.exclusive === b.exclusive &&
      a.taskId === b.taskId &&
      a.threadScope === b.threadScope &&
      a.threadId === b.threadId)
  );
}

/** The unique keys `next` holds that `previous` (the same run's row before) did not, in schema order. */
export function keysGained(previous: Run | undefined, next: Run): [RunUniqueKey, string][] {
  const occurrence =
    previous !== undefined && sameOccurrence(previous, next) ? [] : occurrenceKeysOf(next);
  const slots = previous !== undefined && sameSlots(previous, next) ? [] : slotKeysOf(next);
  return slots.length === 0 ? occurrence : [...occurrence, ...slots];
}

/**
 * One map per unique key. Slots come and go with every launch: kept apart from the occurrence keys (one
 * per run ever decided), a slot key set and deleted over and over stays in a small map; in one large map
 * V8 chains each reuse of the same key behind the deleted entries, and every lookup walks that chain.
 */
export function emptyUniqueIndex(): Record<RunUniqueKey, Map<string, RunId>> {
  return {
    runs_scheduled_occurrence_uq: new Map(),
    runs_backfill_occurrence_uq: new Map(),
    runs_manual_key_uq: new Map(),
    runs_task_slot_uq: new Map(),
    runs_thread_slot_uq: new Map(),
  };
}

/** The key of a manual run in `runs_manual_key_uq`. */
export function manualKey(taskId: TaskId, idempotencyKey: string): string {
  return `${taskId}${SEPARATOR}${idempotencyKey}`;
}
