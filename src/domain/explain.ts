/**
 * `explain` (docs/semantics.md#task-operations): why a task did or did not fire around an instant.
 * Pure: `explainWindow` (explain-window.ts) finds the nominal times around the instant and what DST or
 * `exclude` did there; the service then pages the task's history (newest first) until
 * `historyReachedWindow`, and `explainAt` picks the decision and words the answer (a record's outcome
 * and an exclusion item in words: explain-words.ts).
 *
 * The occurrence explained is the last nominal time at or before the instant (a manual or backfill run
 * within a minute of it takes its place when it is nearer, or when that occurrence has no decision).
 */
import { EXPLAIN_MAX_HISTORY_ROWS, EXPLAIN_NEARBY_MS } from "./explain-window.js";
import type { ExplainWindow, NominalOccurrence } from "./explain-window.js";
import { exclusionText, localTimeIn, outcomeOf, stallSentence } from "./explain-words.js";
import { exclusionStall } from "./exclusion-stall.js";
import type { Run } from "./run.js";
import { exclusionZoneOf } from "./schedule/schedule-spec.js";
import type { ExclusionHit, SuppressedFire } from "./schedule/schedule-spec.js";
import type { Task, TaskStatus } from "./task.js";
import { isTerminalTaskStatus } from "./task.js";
import type { Instant } from "./time.js";

/** Every verdict `explain` can give; docs/semantics.md ("## Explain") explains each. */
export const EXPLAIN_VERDICTS = [
  "launched",
  "queued",
  "skipped",
  "missed",
  "cancelled",
  "failed",
  "timed_out",
  "not_yet_decided",
  "before_start",
  "after_end",
  "dst_gap",
  "dst_repeat_suppressed",
  "dst_skipped",
  "no_occurrence",
  "paused",
  "no_record",
  "excluded",
] as const;
export type ExplainVerdict = (typeof EXPLAIN_VERDICTS)[number];

export interface ExplainInput {
  readonly task: Task;
  readonly at: Instant;
  readonly now: Instant;
  readonly window: ExplainWindow;
  /** History rows read newest first, down to the window (or the read bound). */
  readonly runs: readonly Run[];
  /** False when the read bound stopped the history before it reached the window. */
  readonly complete: boolean;
}

export interface Explanation {
  readonly at: Instant;
  readonly taskStatus: TaskStatus;
  readonly verdict: ExplainVerdict;
  /** One sentence (or two) for a person. */
  readonly message: string;
  readonly occurrence: NominalOccurrence | null;
  readonly nextOccurrence: NominalOccurrence | null;
  readonly suppressed: SuppressedFire | null;
  /** The run (or `missed`/`skipped` record) the verdict is about. */
  readonly run: Run | null;
  /** The item of `exclude` the occurrence falls on (verdict `excluded`), or null. */
  readonly exclusion: ExclusionHit | null;
}

/**
 * The scheduled decision of nominal time `t`: its run or skipped record, or a missed (or excluded)
 * range covering it.
 */
function decisionOf(runs: readonly Run[], t: Instant): Run | null {
  return (
    runs.find(
      (r) =>
        r.trigger === "scheduled" &&
        (r.scheduledFor === t ||
          ((r.status === "missed" || r.reason === "excluded") &&
            r.missedUntil !== null &&
            r.scheduledFor <= t &&
            t <= r.missedUntil)),
    ) ?? null
  );
}

/** The manual or backfill run nearest `at`, within a minute. */
function nearestOther(runs: readonly Run[], at: Instant): Run | null {
  let best: Run | null = null;
  for (const run of runs) {
    if (run.trigger === "scheduled") continue;
    const distance = Math.abs(run.scheduledFor - at);
    if (distance > EXPLAIN_NEARBY_MS) continue;
    if (best === null || distance < Math.abs(best.scheduledFor - at)) best = run;
  }
  return best;
}

/** Whether a decision's outcome is a fire (done, under way, or waiting to go). */
function fires(verdict: ExplainVerdict): boolean {
  return verdict === "launched" || verdict === "queued";
}

/** Why the task did or did not fire around `input.at`. */
export function explainAt(input: ExplainInput): Explanation {
  const { task, at, now, window, runs } = input;
  const spec = task.schedule;
  const zone = exclusionZoneOf(spec);
  const local = localTimeIn(zone);
  const occ = window.occurrence;
  const decision = occ === null ? null : decisionOf(runs, occ.scheduledFor);
  const maxRunsReached = spec.maxRuns !== null && task.admittedCount >= spec.maxRuns;
  const ended = isTerminalTaskStatus(task.status) || maxRunsReached;
  const next =
    window.next !== null && ended && window.next.scheduledFor > task.decidedThrough
      ? null
      : window.next;
  const nextText =
    next === null
      ? "nothing is scheduled after it"
      : `the next occurrence is ${local(next.scheduledFor)}`;
  // A task its exclusions hold still says so after any verdict (exclusion-stall.ts).
  const stall = exclusionStall(task);
  const stallText = stall === null ? "" : ` ${stallSentence(stall, task.status, local)}`;
  const answer = (
    verdict: ExplainVerdict,
    message: string,
    run: Run | null = decision,
    suppressed: SuppressedFire | null = null,
  ): Explanation => ({
    at,
    taskStatus: task.status,
    verdict,
    message: message + stallText,
    occurrence: occ,
    nextOccurrence: next,
    suppressed,
    run,
    exclusion: verdict === "excluded" ? (occ?.exclusion ?? null) : null,
  });
  const ctx = { local, now };
  // With several expressions, the sentence names the one behind the occurrence.
  const ruleText =
    spec.type === "cron" && spec.rules.length > 1 && occ?.rule !== null && occ?.rule !== undefined
      ? ` (rule "${occ.rule}")`
      : "";
  const occText = occ === null ? "" : `The occurrence of ${local(occ.scheduledFor)}${ruleText}`;

  // A manual or backfill run around `at` answers, unless a decided occurrence is nearer.
  const other = nearestOther(runs, at);
  if (
    other !== null &&
    (occ === null || decision === null || Math.abs(other.scheduledFor - at) < at - occ.scheduledFor)
  ) {
    const { verdict, clause } = outcomeOf(other, ctx);
    const subject =
      other.trigger === "manual"
        ? `The manual run triggered at ${local(other.scheduledFor)}`
        : `The backfill of ${local(other.scheduledFor)}`;
    return answer(verdict, `${subject} ${clause}.`, other);
  }

  if (spec.endAt !== null && at > spec.endAt) {
    const last =
      occ === null
        ? ""
        : ` Its last occurrence, ${local(occ.scheduledFor)}, ${decision === null ? "has no record" : outcomeOf(decision, ctx).clause}.`;
    return answer(
      "after_end",
      `The schedule ended at ${local(spec.endAt)}: nothing fires after it.${last}`,
    );
  }
  if (spec.startAt !== null && at < spec.startAt) {
    return answer(
      "before_start",
      `The schedule starts at ${local(spec.startAt)}: nothing fires before it; ${nextText}.`,
    );
  }
  if (
    at < task.createdAt ||
    (occ !== null && decision === null && occ.scheduledFor <= task.createdAt)
  ) {
    return answer(
      "before_start",
      `The task was created at ${local(task.createdAt)}: only nominal times after its creation fire; ${nextText}.`,
    );
  }
  if (occ === null) {
    return answer(
      "no_occurrence",
      `Nothing was scheduled in the 4 years up to this instant; ${nextText}.`,
    );
  }

  const suppressed = window.suppressed;
  if (suppressed !== null) {
    const before =
      decision === null
        ? ""
        : ` The previous fire, ${local(occ.scheduledFor)}, ${outcomeOf(decision, ctx).clause}.`;
    const wall = suppressed.wall.replace("T", " ");
    switch (suppressed.kind) {
      case "overlap_repeat":
        return answer(
          "dst_repeat_suppressed",
          `The wall time ${wall} happened twice (clocks fell back) and a fixed-time job fires only on the first pass.${before}`,
          decision,
          suppressed,
        );
      case "gap_skipped":
        return answer(
          "dst_skipped",
          `The wall time ${wall} did not exist (clocks jumped forward) and a job with a wildcard time field skips wall times that do not exist.${before}`,
          decision,
          suppressed,
        );
      case "jump_skipped":
        return answer(
          "dst_skipped",
          `The zone's clock jumped by more than 3 hours at ${local(suppressed.at)}: the wall time ${wall} did not exist and is not caught up.${before}`,
          decision,
          suppressed,
        );
      case "excluded":
        // The window lists nominal times, excluded ones among them: never a suppressed one.
        break;
    }
  }

  if (occ.exclusion !== null && decision !== null && decision.status !== "skipped") {
    // Moved off its excluded date (docs/schedules.md#moved-occurrences): it kept its nominal time.
    const { verdict, clause } = outcomeOf(decision, ctx);
    return answer(
      verdict,
      `${occText} fell on an excluded date (${exclusionText(occ.exclusion)}) and was moved to ${local(decision.fireAt)}: it ${clause}; ${nextText}.`,
    );
  }
  if (occ.exclusion !== null) {
    const onDate = `${occText} fell on an excluded date (${exclusionText(occ.exclusion)})`;
    const recorded =
      decision !== null
        ? `: it ${outcomeOf(decision, ctx).clause}`
        : occ.scheduledFor <= task.decidedThrough
          ? input.complete
            ? ": it was decided, but no record of it remains"
            : `: its record is not among the task's newest ${EXPLAIN_MAX_HISTORY_ROWS} runs`
          : stall === null
            ? ` and did not fire: it is recorded (skipped, reason excluded) when the task next fires`
            : ` and did not fire: it is recorded (skipped, reason excluded) once the task can fire again`;
    return answer("excluded", `${onDate}${recorded}; ${nextText}.`);
  }

  const gap = occ.note?.kind === "gap_shifted" ? occ.note : null;
  const gapText =
    gap === null
      ? ""
      : `The wall time ${gap.nominalWall.replace("T", " ")} did not exist (clocks jumped forward), so the fire moved ${task.schedule.type === "rrule" ? "later by the gap's length (read with the offset before the gap, RFC 5545 3.3.5)" : "to the transition"}, ${local(occ.scheduledFor)}; it `;

  if (decision !== null) {
    const { verdict, clause } = outcomeOf(decision, ctx);
    if (gap !== null && fires(verdict)) return answer("dst_gap", `${gapText}${clause}.`);
    const backfill = runs.find(
      (r) => r.trigger === "backfill" && r.scheduledFor === occ.scheduledFor,
    );
    const later =
      backfill === undefined || fires(verdict)
        ? ""
        : ` It was backfilled later as run ${backfill.id} (${backfill.status}).`;
    return answer(verdict, `${occText} ${clause}.${later}`);
  }

  if (occ.scheduledFor <= task.decidedThrough) {
    return answer(
      "no_record",
      input.complete
        ? `${occText} was decided, but no record of it remains: it was purged after the retention period, or the schedule was edited since.`
        : `${occText} was decided, but its record is not among the task's newest ${EXPLAIN_MAX_HISTORY_ROWS} runs.`,
    );
  }
  if (ended) {
    const why = maxRunsReached ? `reached max_runs (${String(spec.maxRuns)})` : `is ${task.status}`;
    return answer(
      "after_end",
      `The task ${why}: nothing after ${local(task.decidedThrough)} is admitted, so ${local(occ.scheduledFor)} did not fire.`,
    );
  }
  if (task.status === "paused") {
    return answer(
      "paused",
      `The task is paused: ${local(occ.scheduledFor)} has not been decided; it will be decided when the task is resumed (per the resume's catch_up).`,
    );
  }
  const pending =
    occ.scheduledFor > now
      ? "is in the future: it will be decided when it comes due"
      : "is due but not decided yet: no scheduler replica has admitted it (is one running?)";
  if (gap !== null) return answer("dst_gap", `${gapText}${pending}.`);
  return answer("not_yet_decided", `${occText} ${pending}.`);
}
