/**
 * Fenced run writes in memory: `changeRun` and `changeRuns` each one atomic transaction over
 * `MemoryTables`, the run read, its claim token checked, the change decided and written with its task's
 * bookkeeping. The reference semantics of `RunRepository.changeRun` and `changeRuns`.
 */
import type { FencingToken, RunId, TaskId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import type { RunChange, RunTaskContext } from "../../../domain/run-change.js";
import { runTaskContext, withTaskPatches } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import { applyRunChanges, batchRunIds, decideRunChange } from "../shared/run-change-batch.js";
import { runRow, taskRow } from "./memory-rows.js";
import { taskOfRun } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

export class MemoryFencedRunWrites {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  changeRun(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null> {
    return this.#tables.atomically(() => {
      const decided = decideRunChange(
        id,
        this.#tables.run(id),
        guard.token,
        (run) => this.#taskOf(run),
        decide,
      );
      if (decided === null) return null;
      const { task, change } = decided;
      const row = runRow(change.run);
      this.#tables.putRun(row);
      const launch = change.taskLaunch;
      const verdict = change.taskVerdict;
      if (launch !== undefined || verdict !== undefined) {
        this.#tables.putTask(taskRow(withTaskPatches(task, change)));
      }
      return { ...change, run: row };
    });
  }

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    return this.#tables.atomically(() => {
      const runs = new Map<RunId, Run>();
      const tasks = new Map<TaskId, Task>();
      for (const id of batchRunIds(requests)) {
        const run = this.#tables.run(id);
        if (run === undefined) continue;
        runs.set(id, run);
        tasks.set(run.taskId, this.#taskOf(run));
      }
      const contexts = new Map<TaskId, RunTaskContext>();
      for (const [id, task] of tasks) contexts.set(id, runTaskContext(task));
      const applied = applyRunChanges(requests, runs, contexts);
      for (const { after } of applied.runs) this.#tables.putRun(runRow(after));
      for (const entry of applied.tasks) {
        const task = tasks.get(entry.taskId);
        if (task === undefined) continue;
        this.#tables.putTask(
          taskRow({
            ...task,
            ...(entry.launch === null
              ? {}
              : { lastRunAt: entry.launch.lastRunAt, lastRunId: entry.launch.lastRunId }),
            runCount: task.runCount + entry.launches,
            ...(entry.verdict === null
              ? {}
              : {
                  lastError: entry.verdict.lastError,
                  status: entry.verdict.status ?? task.status,
                }),
          }),
        );
      }
      return applied.results;
    });
  }

  #taskOf(run: Run): Task {
    return taskOfRun(this.#tables, run);
  }
}
