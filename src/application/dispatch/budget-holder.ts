/**
 * The schedule policy in force on this replica, and the one thing that may change it: the fleet's
 * global budget stored in the database (docs/operations.md#sizing-the-budget). Every dispatch use case
 * and the runtime read the policy through `policy`, a getter; only `refreshBudget` replaces it.
 */
import type { SchedulePolicy } from "../../domain/options.js";
import type { Store } from "../../domain/ports/store.js";
import { withBudget } from "../policy/policy-options.js";

/** Reads the policy in force (it changes only with the fleet's stored budget). */
export interface PolicyInForce {
  readonly policy: SchedulePolicy;
}

/** A change of the budget in force, with the owner share in force when there is one. */
export interface BudgetChange {
  readonly from: number;
  readonly to: number;
  readonly maxActiveRunsPerOwner?: number;
}

export class BudgetHolder implements PolicyInForce {
  readonly #store: Pick<Store, "fleet">;
  /** Replaced only when the fleet's stored budget changes (`refreshBudget`). */
  #policy: SchedulePolicy;

  constructor(store: Pick<Store, "fleet">, policy: SchedulePolicy) {
    this.#store = store;
    this.#policy = policy;
  }

  get policy(): SchedulePolicy {
    return this.#policy;
  }

  /**
   * Applies the global budget stored in the database when it changed, and an owner's share with it when
   * the share is a part of the budget; answers the change, or null when there is none (or the store
   * keeps no budget).
   */
  async refreshBudget(): Promise<BudgetChange | null> {
    const stored = (await this.#store.fleet?.storedBudget()) ?? null;
    const from = this.#policy.maxConcurrentRuns;
    if (stored === null || stored === from) return null;
    this.#policy = withBudget(this.#policy, stored);
    const share = this.#policy.ownerShare;
    return {
      from,
      to: stored,
      ...(share === undefined ? {} : { maxActiveRunsPerOwner: share.maxActiveRuns }),
    };
  }
}
