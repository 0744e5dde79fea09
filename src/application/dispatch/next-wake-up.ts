/** The next wake-up (docs/architecture.md#cadence): the earliest instant something may need doing. */
import type { RunRepository } from "../../domain/ports/run-repository.js";
import type { TaskRepository } from "../../domain/ports/task-repository.js";
import type { Instant } from "../../domain/time.js";

export class NextWakeUp {
  readonly #tasks: Pick<TaskRepository, "nextDueAt">;
  readonly #runs: Pick<RunRepository, "nextRunWakeAt">;

  constructor(deps: {
    readonly tasks: Pick<TaskRepository, "nextDueAt">;
    readonly runs: Pick<RunRepository, "nextRunWakeAt">;
  }) {
    this.#tasks = deps.tasks;
    this.#runs = deps.runs;
  }

  /** A due task, a not_before, a deadline: whichever comes first, or null when nothing is waiting. */
  async nextWakeAt(): Promise<Instant | null> {
    const [task, run] = await Promise.all([this.#tasks.nextDueAt(), this.#runs.nextRunWakeAt()]);
    if (task === null) return run;
    if (run === null) return task;
    return task < run ? task : run;
  }
}
