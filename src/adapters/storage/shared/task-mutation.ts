/**
 * The part of `TaskRepository.mutateTask` every store shares: the command decides on what was read under
 * the task's row lock, and a compare-and-set on `version` refuses the write when it no longer matches.
 */
import { StaleVersionError } from "../../../domain/errors.js";
import type { LockedTask, TaskMutation } from "../../../domain/ports/task-repository.js";

/** What `decide` returns for `locked`. @throws version_conflict when its `expectedVersion` is stale */
export function decideMutation<T>(
  locked: LockedTask,
  decide: (locked: LockedTask) => TaskMutation<T>,
): TaskMutation<T> {
  const mutation = decide(locked);
  const expected = mutation.expectedVersion;
  if (expected !== undefined && expected !== locked.task.version) {
    throw new StaleVersionError(expected, locked.task.version);
  }
  return mutation;
}
