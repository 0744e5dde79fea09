/**
 * The store-independent steps of a claim round (docs/storage.md#the-run-model-on-sqlite; issue 30): cap
 * the claim to the free budget, then, for each run `select` chose, in its order, stop at the budget, keep
 * the owners' shares when the store counts them here, skip a run no longer queued, mint its fencing token,
 * let the domain claim it and write it (a slot key's refusal skips it). The store supplies its statements
 * (`ClaimRoundStore`) and runs this inside its own transaction: SQLite and memory use it.
 */
import { randomUUID } from "node:crypto";
import type { ClaimCandidate } from "../../../domain/claim.js";
import { fencingToken } from "../../../domain/ids.js";
import type { FencingToken, OwnerId } from "../../../domain/ids.js";
import type { ClaimedRun, ClaimRequest } from "../../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";

/** What a claim may take: the budget's free slots, never more than the request's limit, never below 0. */
export function claimBudget(request: ClaimRequest, slotsHeld: number): number {
  return Math.max(0, Math.min(request.maxConcurrentRuns - slotsHeld, request.limit));
}

/** The statements a store supplies to `claimChosen`; `Row` is the run as the store read it. */
export interface ClaimRoundStore<Row> {
  /** The chosen run as the store holds it now, or undefined when it is not to be claimed. */
  rowOf(candidate: ClaimCandidate): Row | undefined;
  /** The run's status in `row`: only a queued run is claimed. */
  statusOf(row: Row): RunStatus;
  /** The queued run of `row`, with its task. */
  claimable(row: Row): { readonly run: Run; readonly task: Task };
  /** Writes the claimed run: the run as written, or null when a slot key refused it (the run is skipped). */
  writeClaim(run: Run, before: Row): Run | null;
}

/** Owners' shares kept while claiming: counted on each claim written. */
export interface ClaimShareKeeper {
  admits(owner: OwnerId): boolean;
  claimed(owner: OwnerId): void;
}

/**
 * Claims `picked` in order, at most `budget` runs: the budget (and, given `shares`, the owners' shares)
 * are the store's to keep, whatever `select` returned.
 */
export function claimChosen<Row>(
  picked: readonly ClaimCandidate[],
  budget: number,
  claim: (run: Run, task: Task, token: FencingToken) => Run,
  store: ClaimRoundStore<Row>,
  shares?: ClaimShareKeeper,
): ClaimedRun[] {
  const claimed: ClaimedRun[] = [];
  for (const candidate of picked) {
    if (claimed.length >= budget) break;
    if (shares !== undefined && !shares.admits(candidate.owner)) continue;
    const row = store.rowOf(candidate);
    if (row === undefined || store.statusOf(row) !== "queued") continue;
    const { run, task } = store.claimable(row);
    const written = store.writeClaim(claim(run, task, fencingToken(randomUUID())), row);
    if (written !== null) {
      claimed.push({ run: written, task });
      shares?.claimed(candidate.owner);
    }
  }
  return claimed;
}
