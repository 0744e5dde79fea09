/**
 * The global budget a fleet applies (docs/operations.md#sizing-the-budget): one value stored in the
 * database, written by the first replica (or by `punctual migrate --max-concurrent-runs`). A replica
 * started with another value says so and applies the stored one, so a mixed fleet never applies two.
 */
import type { Instant } from "../../domain/time.js";
import type { Logger } from "../events/logger.js";
import type { Store } from "../../domain/ports/store.js";

/**
 * The budget this replica applies: the stored one, else `requested` (then stored). `explicit` says the
 * operator asked for `requested` (a flag, a variable, a library option) rather than taking the default:
 * only then is a difference worth a warning.
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
  const inForce = await store.fleet.adoptBudget(requested, args.now);
  if (inForce !== requested && args.explicit) {
    log.warn(
      { requested, inForce },
      "max_concurrent_runs differs from the global budget stored in the database: applying the stored one (change it with punctual migrate --max-concurrent-runs)",
    );
  } else if (inForce !== requested) {
    log.info({ inForce }, "applying the global budget stored in the database");
  }
  return inForce;
}
