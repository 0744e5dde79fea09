/**
 * How many tasks an insert adds per owner: what the `tasks_per_owner` check of each store's insert
 * (TaskCountCheck) is called with.
 */
import type { OwnerId } from "../../../domain/ids.js";
import type { Task } from "../../../domain/task.js";

export function addedByOwner(tasks: readonly Task[]): Map<OwnerId, number> {
  const added = new Map<OwnerId, number>();
  for (const task of tasks) added.set(task.owner, (added.get(task.owner) ?? 0) + 1);
  return added;
}
