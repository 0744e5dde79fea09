/**
 * One run changed through the store, its status change reported as a `run:changed` event
 * (docs/architecture.md#events). Both services change runs this way, so every status change they record
 * is reported once, with the status the write found. `reportRunChanged` is the one place the event is
 * emitted: the batched run writes and redrive report through it too.
 */
import type { FencingToken, RunId } from "../../domain/ids.js";
import type { RunRepository } from "../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { RunChange } from "../../domain/run-change.js";
import type { TargetKind } from "../../domain/target.js";
import type { Task } from "../../domain/task.js";
import type { EventSink } from "../events/internal-events.js";

/** Emits `run:changed` for a run a write found at `from`, when its status changed. */
export function reportRunChanged(
  events: EventSink,
  run: Run,
  from: RunStatus,
  targetKind: TargetKind,
): void {
  if (from !== run.status) events.emit("run:changed", { run, from, targetKind });
}

/** A run change as written, with the task `decide` saw (for the target's cancel hook). */
export interface ChangedRun {
  readonly change: RunChange;
  readonly task: Task;
}

/** `runs.changeRun`, reporting the status change; null when `decide` changed nothing. */
export async function changeRunReported(
  runs: RunRepository,
  events: EventSink,
  id: RunId,
  guard: { readonly token?: FencingToken },
  decide: (run: Run, task: Task) => RunChange | null,
): Promise<ChangedRun | null> {
  const seen: { from?: RunStatus; task?: Task } = {};
  const change = await runs.changeRun(id, guard, (run, task) => {
    seen.from = run.status;
    seen.task = task;
    return decide(run, task);
  });
  if (change === null || seen.from === undefined || seen.task === undefined) return null;
  reportRunChanged(events, change.run, seen.from, seen.task.target.kind);
  return { change, task: seen.task };
}

/** One run changed, its status change reported: the change, or null when `decide` changed nothing. */
export async function changeOneRun(
  ...args: Parameters<typeof changeRunReported>
): Promise<RunChange | null> {
  const changed = await changeRunReported(...args);
  return changed?.change ?? null;
}

/** Each run of `ids` changed in turn, unfenced, each status change reported: the runs that changed. */
export async function changeEachRun(
  runs: RunRepository,
  events: EventSink,
  ids: readonly RunId[],
  decide: (run: Run, task: Task) => RunChange | null,
): Promise<ChangedRun[]> {
  const changed: ChangedRun[] = [];
  for (const id of ids) {
    const one = await changeRunReported(runs, events, id, {}, decide);
    if (one !== null) changed.push(one);
  }
  return changed;
}
