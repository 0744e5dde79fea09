/**
 * One run changed through the store (a `changeRuns` batch of one), its status change reported as a
 * `run:changed` event (docs/architecture.md#events). Both services change runs this way, so every status
 * change they record is reported once, with the status the write found. `reportRunChanged` is the one
 * place the event is emitted: the batched run writes and redrive report through it too.
 */
import type { FencingToken, RunId } from "../../domain/ids.js";
import type {
  RunChangeRequest,
  RunChangeResult,
  RunRepository,
} from "../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { RunChange, RunTaskContext } from "../../domain/run-change.js";
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

/** A run change as written, with the task it found (for the target's cancel hook). */
export interface ChangedRun {
  readonly change: RunChange;
  readonly task: Task;
}

/**
 * One run changed through `runs.changeRuns` (a batch of one), its status change reported: the result,
 * or null when `decide` changed nothing. A refusal (not_found, lease_lost, a transition `decide` refused)
 * is thrown, as the callers answer it.
 */
async function changeReported(
  runs: RunRepository,
  events: EventSink,
  request: RunChangeRequest,
): Promise<(RunChangeResult & { readonly kind: "changed" }) | null> {
  let seen: { readonly from: RunStatus; readonly targetKind: TargetKind } | undefined;
  const results = await runs.changeRuns([
    {
      ...request,
      decide: (run, task) => {
        // The last decision is the one written (a store may decide again under its locks).
        seen = { from: run.status, targetKind: task.targetKind };
        return request.decide(run, task);
      },
    },
  ]);
  // A batch of one answers one result.
  const result = results[0] as RunChangeResult;
  if (result.kind === "refused") throw result.error;
  if (result.kind === "unchanged") return null;
  // A change was decided, so `decide` ran.
  const { from, targetKind } = seen as NonNullable<typeof seen>;
  reportRunChanged(events, result.change.run, from, targetKind);
  return result;
}

/** A run changed, its status change reported, with its task: null when `decide` changed nothing. */
export async function changeRunReported(
  runs: RunRepository,
  events: EventSink,
  id: RunId,
  guard: { readonly token?: FencingToken },
  decide: (run: Run, task: RunTaskContext) => RunChange | null,
): Promise<ChangedRun | null> {
  const changed = await changeReported(runs, events, { ...guard, id, decide, withTask: true });
  if (changed === null) return null;
  // `withTask`: a store answers a change with its task.
  /* v8 ignore next */
  if (changed.task === undefined) throw new Error(`run ${id} changed without its task`);
  return { change: changed.change, task: changed.task };
}

/** One run changed, its status change reported: the change, or null when `decide` changed nothing. */
export async function changeOneRun(
  runs: RunRepository,
  events: EventSink,
  id: RunId,
  guard: { readonly token?: FencingToken },
  decide: (run: Run, task: RunTaskContext) => RunChange | null,
): Promise<RunChange | null> {
  const changed = await changeReported(runs, events, { ...guard, id, decide });
  return changed?.change ?? null;
}

/** Each run of `ids` changed in turn, unfenced, each status change reported: the runs that changed. */
export async function changeEachRun(
  runs: RunRepository,
  events: EventSink,
  ids: readonly RunId[],
  decide: (run: Run, task: RunTaskContext) => RunChange | null,
): Promise<ChangedRun[]> {
  const changed: ChangedRun[] = [];
  for (const id of ids) {
    const one = await changeRunReported(runs, events, id, {}, decide);
    if (one !== null) changed.push(one);
  }
  return changed;
}
