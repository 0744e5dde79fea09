/**
 * How `explain` words a decision's record (docs/semantics.md#explain): what its status and reason say,
 * as a verdict and a clause ("was launched as run R ..."), and the item of `exclude` an occurrence falls
 * on (docs/schedules.md#exclude). explain.ts builds the sentence around them.
 */
import type { ExclusionStall } from "./exclusion-stall.js";
import type { Run, RunReason } from "./run.js";
import { formatOffset, formatWall } from "./schedule/civil-time.js";
import { exclusionZoneOf, formatLocalDate } from "./schedule/schedule-spec.js";
import type { ExclusionHit } from "./schedule/schedule-spec.js";
import { wallOf } from "./schedule/wall-clock.js";
import type { Task, TaskStatus } from "./task.js";
import type { Instant } from "./time.js";

/** The verdicts a record gives (explain.ts's `EXPLAIN_VERDICTS` holds them all). */
export type OutcomeVerdict =
  "queued" | "launched" | "failed" | "timed_out" | "cancelled" | "skipped" | "excluded" | "missed";

/** `the date 2026-12-25 of calendar "holidays"`: the exclusion item in words. */
export function exclusionText(hit: ExclusionHit): string {
  const item = hit.item;
  const what =
    item.kind === "date"
      ? `the date ${formatLocalDate(item.day)}`
      : item.kind === "range"
        ? `the dates ${formatLocalDate(item.from)} to ${formatLocalDate(item.to)}`
        : `the day rule "${item.text}"`;
  return hit.calendar === null ? what : `${what} of calendar "${hit.calendar}"`;
}

/** An instant on the wall clock of `zone`, with its offset: `2026-12-24 09:00:00 +01:00`. */
export function localTimeIn(zone: string): (at: Instant) => string {
  return (at) => {
    const wall = wallOf(zone, at);
    return `${formatWall(wall).replace("T", " ")} ${formatOffset(wall - at)}`;
  };
}

/** Why a task its exclusions hold still will not fire (exclusion-stall.ts), in one sentence. */
export function stallSentence(
  stall: ExclusionStall,
  status: TaskStatus,
  local: (at: Instant) => string,
): string {
  return (
    `It will not fire again while its exclusions stand: every occurrence it has left, from ` +
    `${local(stall.next)} on, falls on an excluded date (the first: ${exclusionText(stall.exclusion)}); ` +
    `it stays ${status} and fires again once a calendar it names, or its schedule, leaves a date free.`
  );
}

/** The warning a calendar's put gives for a task it holds still: the task by id and title, and why. */
export function stallWarning(task: Task, stall: ExclusionStall): string {
  const local = localTimeIn(exclusionZoneOf(task.schedule));
  return `Task ${task.id} ("${task.title}"): ${stallSentence(stall, task.status, local)}`;
}

/** How a skipped or missed range record reads: `record R covers N nominal times from A to B`. */
function rangeText(run: Run, local: (at: Instant) => string): string {
  const count = run.missedCount ?? 1;
  const until = run.missedUntil ?? run.scheduledFor;
  return count === 1
    ? `record ${run.id}`
    : `record ${run.id} covers ${count} nominal times from ${local(run.scheduledFor)} to ${local(until)}`;
}

const REASON_TEXT: Readonly<Record<RunReason, string>> = {
  overlap: "the task still had an active run (overlap skip)",
  coalesced: "a run was already waiting (overlap buffer_one)",
  buffer_full: "1,000 runs were already waiting (overlap buffer_all)",
  superseded: "a newer occurrence replaced it (overlap cancel_other)",
  queue_timeout: "it waited in the queue longer than the task's queue_timeout",
  down: "no replica admitted it in time and the catch-up policy did not choose it",
  paused: "it fell inside a pause and the resume did not catch it up",
  window: "it was overdue beyond the catch-up window",
  launch_failed: "the target refused the launch",
  target_failed: "the target reported a failure",
  replica_lost: "the replica running it stopped heartbeating",
  run_timeout: "it was still running at its deadline",
  cancel_requested: "its owner cancelled it",
  task_paused: "the task was paused while it was queued",
  task_cancelled: "the task was cancelled while it was queued",
  task_deleted: "the task was deleted",
  target_cancelled: "the target cancelled it",
  excluded: "it fell on a date the schedule's exclude names",
  non_retryable: "the handler failed it and asked for no retry",
  invalid_input: "the target's input no longer matched the handler's schema",
  quota: "its owner was over the scheduled-runs-per-minute quota",
  no_handler: "no live replica serves its handler",
};

/** What a run's status says, as a verdict and a clause ("was launched as run R ..."). */
export function outcomeOf(
  run: Run,
  ctx: { readonly local: (at: Instant) => string; readonly now: Instant },
): { verdict: OutcomeVerdict; clause: string } {
  const { local } = ctx;
  const why = run.reason === null ? "" : `: ${REASON_TEXT[run.reason]}`;
  const error = run.error === null ? "" : ` (${run.error})`;
  const launched =
    run.launchedAt === null
      ? `was launched as run ${run.id}`
      : `was launched as run ${run.id} at ${local(run.launchedAt)}${latenessText(run)}`;
  switch (run.status) {
    case "queued":
      return {
        verdict: "queued",
        clause:
          `is queued as run ${run.id}, waiting ` +
          (run.notBefore > ctx.now
            ? `for ${local(run.notBefore)}`
            : "for its thread, the task's slot or the global budget"),
      };
    case "launching":
      return {
        verdict: "launched",
        clause: `is being launched as run ${run.id} (attempt ${run.attempt})`,
      };
    case "running":
      return { verdict: "launched", clause: `${launched}; it is still running` };
    case "succeeded":
      return { verdict: "launched", clause: `${launched}; it succeeded` };
    case "failed":
      return {
        verdict: "failed",
        clause:
          run.launchedAt === null
            ? `was not launched: run ${run.id} failed${why}${error}`
            : `${launched} and failed${why}${error}`,
      };
    case "timed_out":
      return {
        verdict: "timed_out",
        clause: `${launched} and timed out${run.deadlineAt === null ? "" : ` at its deadline ${local(run.deadlineAt)}`}`,
      };
    case "cancelled":
      return {
        verdict: "cancelled",
        clause:
          run.launchedAt === null
            ? `was cancelled before its launch, as run ${run.id}${why}`
            : `${launched} and then cancelled${why}`,
      };
    case "skipped":
      if (run.reason === "excluded") {
        return { verdict: "excluded", clause: `was skipped${why}; ${rangeText(run, local)}` };
      }
      return { verdict: "skipped", clause: `was skipped (record ${run.id})${why}` };
    case "missed": {
      const range = rangeText(run, local);
      return {
        verdict: "missed",
        clause: `was missed${why}${(run.missedCount ?? 1) === 1 ? ` (${range})` : `; ${range}`}`,
      };
    }
  }
}

function latenessText(run: Run): string {
  if (run.latenessMs === null) return "";
  const seconds = (run.latenessMs / 1000).toFixed(1);
  return ` (${seconds} s after its fire time${run.late ? ", late" : ""})`;
}
