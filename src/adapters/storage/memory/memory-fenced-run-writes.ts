/**
 * Fenced run writes in memory: `changeRuns` one atomic transaction over `MemoryTables`, each run read,
 * its claim token checked, the change decided and written with its task's bookkeeping. The reference
 * semantics of `RunRepository.changeRuns`.
 */
import type { RunId, TaskId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import { runTaskContext } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import { applyRunChanges, batchRunIds } from "../shared/run-change-batch.js";
import { runRow, taskRow } from "./memory-rows.js";
import { taskOfRun } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

export class MemoryFencedRunWrites {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
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
      // The whole tasks are at hand: a request with `withTask` gets its own.
      const applied = applyRunChanges(requests, runs, contexts, tasks);
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
