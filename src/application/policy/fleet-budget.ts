/**
 * The global budget a fleet applies (docs/operations.md#sizing-the-budget): one value stored in the
 * database. A replica given a budget explicitly (a flag, a variable, a library option) sets it for the
 * fleet; one given none adopts the stored one (storing the default when there is none yet). Running
 * replicas apply a change at their next sweep, so a fleet never applies two budgets for long.
 */
import type { Instant } from "../../domain/time.js";
import type { Logger } from "../events/logger.js";
import type { Store } from "../../domain/ports/store.js";

/**
 * The budget this replica applies. `explicit` says the operator asked for `requested` rather than taking
 * the default: then it replaces the stored one (logged with the value it replaces); otherwise the stored
 * one is applied, else `requested` is stored.
 */
export async function agreeBudget(args: {
  readonly store: Store;
  readonly requested: number;
  readonly explicit: boolean;
  readonly now: Instant;
  readonly log: Logger;
}): Promise<number> {
  const { store, requested, log } = args;
  if (store.fleet === undefined) return requested;
  if (args.explicit) {
    const previous = await store.fleet.replaceBudget(requested, args.now);
    if (previous !== null && previous !== requested) {
      log.warn(
        { from: previous, to: requested },
        "max_concurrent_runs given explicitly: the global budget stored in the database changes for every replica",
      );
    }
    return requested;
  }
  const inForce = await store.fleet.adoptBudget(requested, args.now);
  if (inForce !== requested) {
    log.info({ inForce }, "applying the global budget stored in the database");
  }
  return inForce;
}
