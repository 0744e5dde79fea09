/**
 * The claim (docs/semantics.md#launch): queued runs this replica can launch, within the global budget and
 * each owner's share in force, chosen by the domain inside the store's claim round.
 */
import { selectClaimable, shareLimitsOwners } from "../../domain/claim.js";
import type { ClaimedRun, RunRepository } from "../../domain/ports/run-repository.js";
import type { AdmissionClaim } from "../../domain/ports/task-repository.js";
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
  async claim(args: ClaimArgs): Promise<readonly ClaimedRun[]> {
    const { request, select, claim } = this.admissionClaim(args);
    const claimed = await this.#runs.claimRuns(request, select, claim);
    this.announce(claimed);
    return claimed;
  }

  /**
   * The same claim, for a store to make in the admitting transaction (docs/storage.md#fused-admit-and-claim):
   * the request with the budget and share in force, the domain's selection and its transition.
   */
  admissionClaim(args: ClaimArgs): AdmissionClaim {
    const { now, replicaId, handlerNames } = args;
    const policy = this.#budget.policy;
    const leaseMs = policy.leaseMs;
    // No share when nobody is capped below the budget in force: the claim then counts nothing per owner.
    const share =
      policy.ownerShare !== undefined &&
      shareLimitsOwners(policy.ownerShare, policy.maxConcurrentRuns)
        ? policy.ownerShare
        : undefined;
    return {
      request: {
        now,
        replicaId,
        leaseMs,
        maxConcurrentRuns: policy.maxConcurrentRuns,
        limit: args.limit,
        handlerNames,
        ...(share === undefined ? {} : { share }),
      },
      select: (input) =>
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
      claim: (run, task, token) => claimRun(run, { now, token, leaseMs, replicaId }, task.options),
    };
  }

  /** Emits `run:claimed` for each run claimed, by `claim` or in an admission. */
  announce(claimed: readonly ClaimedRun[]): void {
    if (claimed.length === 0 || this.#events.listens?.("run:claimed") === false) return;
    for (const item of claimed) {
      this.#events.emit("run:claimed", { run: item.run, targetKind: item.task.target.kind });
    }
  }
}

/** What one claim asks for. */
export interface ClaimArgs {
  readonly now: Instant;
  readonly replicaId: string;
  readonly limit: number;
  readonly handlerNames: ReadonlySet<string>;
}
