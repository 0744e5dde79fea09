/**
 * The claim (docs/semantics.md#launch): queued runs this replica can launch, within the global budget and
 * each owner's share in force, chosen by the domain inside the store's claim round.
 */
import { selectClaimable, shareLimitsOwners } from "../../domain/claim.js";
import type { ClaimedRun, RunRepository } from "../../domain/ports/run-repository.js";
import { claimRun } from "../../domain/run-transitions.js";
import type { Instant } from "../../domain/time.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import type { PolicyInForce } from "./budget-holder.js";

export class ClaimRuns {
  readonly #runs: Pick<RunRepository, "claimRuns">;
  readonly #budget: PolicyInForce;
  readonly #events: EventSink;

  constructor(deps: {
    readonly runs: Pick<RunRepository, "claimRuns">;
    readonly budget: PolicyInForce;
    /** Receives each claim. @default none */
    readonly events?: EventSink;
  }) {
    this.#runs = deps.runs;
    this.#budget = deps.budget;
    this.#events = deps.events ?? NO_EVENTS;
  }

  /** Claims queued runs this replica can launch, within the global budget (docs/semantics.md#launch). */
  async claim(args: {
    now: Instant;
    replicaId: string;
    limit: number;
    handlerNames: ReadonlySet<string>;
  }): Promise<readonly ClaimedRun[]> {
    const { now, replicaId, handlerNames } = args;
    const policy = this.#budget.policy;
    const leaseMs = policy.leaseMs;
    // No share when nobody is capped below the budget in force: the claim then counts nothing per owner.
    const share =
      policy.ownerShare !== undefined &&
      shareLimitsOwners(policy.ownerShare, policy.maxConcurrentRuns)
        ? policy.ownerShare
        : undefined;
    const claimed = await this.#runs.claimRuns(
      {
        now,
        replicaId,
        leaseMs,
        maxConcurrentRuns: policy.maxConcurrentRuns,
        limit: args.limit,
        handlerNames,
        ...(share === undefined ? {} : { share }),
      },
      (input) =>
        selectClaimable({
          candidates: input.candidates,
          busyThreads: input.busyThreads,
          busyTasks: input.busyTasks,
          budget: input.budget,
          now,
          handlerNames,
          ...(input.ownerActive === undefined ? {} : { ownerActive: input.ownerActive }),
          ...(share === undefined ? {} : { share }),
        }),
      (run, task, token) => claimRun(run, { now, token, leaseMs, replicaId }, task.options),
    );
    if (this.#events.listens?.("run:claimed") !== false) {
      for (const item of claimed) {
        this.#events.emit("run:claimed", { run: item.run, targetKind: item.task.target.kind });
      }
    }
    return claimed;
  }
}
