/**
 * Lets the event loop serve what waits (a probe, another owner's request) between two items of a long
 * request: a batch's tasks, a calendar's tasks (docs/security.md#bounded-work). Each item's own work is
 * bounded (the schedule work budget); this keeps their sum from holding the loop.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
