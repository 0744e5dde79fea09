/**
 * How far into the queue a claim reads (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch). Any prefix of the queue in claim order is a valid
 * place to choose from (a thread's head always comes before its later runs), so a claim first reads as
 * many runs as it may claim: in a burst of independent runs that prefix is enough. Only when that read
 * was full and still left room (runs waiting behind a busy thread or task, not yet due, or for handlers
 * this replica lacks) does it read the wider window, which holds the heads of many more threads.
 */

/** The narrow first read: as many runs as the claim may take. */
export function firstClaimWindow(limit: number): number {
  return Math.max(1, limit);
}

/** The wide second read. */
export function fullClaimWindow(limit: number): number {
  return Math.max(4 * limit, 1000);
}

/**
 * Whether the wider window must be read after a first read of `window` runs: that read came back full
 * (more runs are queued behind it), chose fewer runs than there is room for, and was narrower than the
 * wide window.
 */
export function needsWiderWindow(args: {
  readonly limit: number;
  readonly window: number;
  readonly read: number;
  readonly chosen: number;
  readonly room: number;
}): boolean {
  return (
    args.read >= args.window && args.chosen < args.room && args.window < fullClaimWindow(args.limit)
  );
}
