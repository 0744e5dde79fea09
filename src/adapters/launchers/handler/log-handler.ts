/**
 * The built-in `log` handler: logs the run and succeeds. Useful to try punctual, and as a heartbeat task.
 */
import type { Logger } from "../../../application/events/logger.js";
import type { Handler } from "./handler-definition.js";

export function createLogHandler(logger: Logger): Handler {
  return ({ run, task, input }) => {
    logger.info(
      {
        task_id: task.id,
        run_id: run.id,
        scheduled_for: run.scheduled_for,
        fire_at: run.fire_at,
        late: run.late,
        attempt: run.attempt,
        input,
      },
      `task "${task.title}" fired`,
    );
    return { logged: true };
  };
}
