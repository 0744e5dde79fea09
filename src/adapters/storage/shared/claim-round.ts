/**
 * The store-independent steps of a claim round (docs/storage.md#the-run-model-on-sqlite, docs/architecture.md#claims; issue 30), written once
 * for every store: cap the claim to the free budget (`claimBudget`), then walk the runs `select` chose,
 * in its order: stop at the budget, keep the owners' shares when the store counts them here, skip a run
 * no longer queued (or no longer found), mint its fencing token and let the domain claim it. That is the
 * decision (`decideClaims`); the write is the store's (`writeClaims`): PostgreSQL writes a round's
 * decisions in one set-based statement (postgres-claim.ts), SQLite and memory write them row by row
 * through `claimChosen`. A run a slot key refuses is skipped, not an error. The store supplies only its
 * statements (`ClaimRoundReader`, `ClaimRoundStore`) and runs this inside its own transaction.
 *
 * The only place a store mints a claim's fencing token (test/architecture/storage-roles.test.ts).
 */
import { randomUUID } from "node:crypto";
import type { AdmissionTaskFields } from "../../../domain/admission.js";
import type { ClaimCandidate } from "../../../domain/claim.js";
import { fencingToken } from "../../../domain/ids.js";
import type { FencingToken, OwnerId } from "../../../domain/ids.js";
import type { ClaimedRun, ClaimRequest } from "../../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../../domain/run.js";
import { withScheduleFields } from "../../../domain/task.js";
import type { Task } from "../../../domain/task.js";

/** What a claim may take: the budget's free slots, never more than the request's limit, never below 0. */
export function claimBudget(request: ClaimRequest, slotsHeld: number): number {
  return Math.max(0, Math.min(request.maxConcurrentRuns - slotsHeld, request.limit));
}

/**
 * A queued run offered to the domain's `select`, as every store offers it (its handler's name for a
 * handler task; `queuedBehind` when the store saw a run of its thread queued ahead of it, or will not
 * claim it this round).
 */
export function claimCandidateOf(run: Run, task: Task, queuedBehind = false): ClaimCandidate {
  return {
    id: run.id,
    taskId: run.taskId,
    owner: run.owner,
    threadScope: run.threadScope,
    threadId: run.threadId,
    exclusive: run.exclusive,
    notBefore: run.notBefore,
    queuedAt: run.queuedAt,
    handlerName: task.target.kind === "handler" ? task.target.name : null,
    ...(queuedBehind ? { queuedBehind: true } : {}),
  };
}

/**
 * What a claim fused into admission may take (docs/storage.md#fused-admit-and-claim): each task's new
 * queued runs, with the task as the admission leaves it (its schedule fields written over the read).
 */
export function fusableRuns(
  admissions: readonly {
    readonly task: Task;
    readonly fields: AdmissionTaskFields;
    readonly newRuns: readonly Run[];
  }[],
): ClaimedRun[] {
  const entries: ClaimedRun[] = [];
  for (const { task, fields, newRuns } of admissions) {
    // No array per task: a filtered one came back empty (another array map) on some batches, and V8
    // deoptimised this function in every fresh process.
    let admitted: Task | null = null;
    for (const run of newRuns) {
      if (run.status !== "queued") continue;
      admitted ??= withScheduleFields(task, fields);
      entries.push({ run, task: admitted });
    }
  }
  return entries;
}

/** The domain's claim of a queued run with a freshly minted token. */
export type ClaimRun = (run: Run, task: Task, token: FencingToken) => Run;

/** How a store reads a chosen run for the decision; `Row` is the run as the store read it. */
export interface ClaimRoundReader<Row> {
  /** The chosen run as the store holds it now, or undefined when it is not to be claimed. */
  rowOf(candidate: ClaimCandidate): Row | undefined;
  /** The run's status in `row`: only a queued run is claimed. */
  statusOf(row: Row): RunStatus;
  /** The queued run of `row`, with its task. */
  claimable(row: Row): { readonly run: Run; readonly task: Task };
}

/** One run the round decided to claim: the run claimed (with its task), as read (`before`). */
export interface ClaimDecision<Row> {
  readonly candidate: ClaimCandidate;
  readonly before: Row;
  readonly claimed: ClaimedRun;
}

/** The statements a row-at-a-time store supplies to `claimChosen`. */
export interface ClaimRoundStore<Row> extends ClaimRoundReader<Row> {
  /**
   * Writes the decided claims, in order: the claims written; a run a slot key refused is left out (it
   * is skipped, not an error).
   */
  writeClaims(decisions: readonly ClaimDecision<Row>[]): readonly ClaimedRun[];
}

/** Owners' shares kept while claiming: counted on each claim decided (or written, in `claimChosen`). */
export interface ClaimShareKeeper {
  admits(owner: OwnerId): boolean;
  claimed(owner: OwnerId): void;
}

/**
 * The decisions in `picked`'s order, lazily: each candidate the shares admit whose run is still queued,
 * claimed by the domain with a freshly minted token. The caller stops at its budget.
 */
function* decisions<Row>(
  picked: readonly ClaimCandidate[],
  claim: ClaimRun,
  reader: ClaimRoundReader<Row>,
  shares: ClaimShareKeeper | undefined,
): Generator<ClaimDecision<Row>> {
  for (const candidate of picked) {
    if (shares !== undefined && !shares.admits(candidate.owner)) continue;
    const before = reader.rowOf(candidate);
    if (before === undefined || reader.statusOf(before) !== "queued") continue;
    const { run, task } = reader.claimable(before);
    yield {
      candidate,
      before,
      claimed: { run: claim(run, task, fencingToken(randomUUID())), task },
    };
  }
}

/**
 * The claims of `picked`, in order, at most `budget`, each counted against `shares` when given: what a
 * set-based store then writes at once (its `writeClaims` skipping refused runs).
 */
export function decideClaims<Row>(
  picked: readonly ClaimCandidate[],
  budget: number,
  claim: ClaimRun,
  reader: ClaimRoundReader<Row>,
  shares?: ClaimShareKeeper,
): ClaimDecision<Row>[] {
  const decided: ClaimDecision<Row>[] = [];
  if (budget <= 0) return decided;
  for (const decision of decisions(picked, claim, reader, shares)) {
    decided.push(decision);
    shares?.claimed(decision.candidate.owner);
    if (decided.length >= budget) break;
  }
  return decided;
}

/**
 * Claims `picked` in order, at most `budget` runs, writing each decision as it is made: a run a slot key
 * refused spends neither the budget nor its owner's share, so the next chosen run may take its place.
 * The budget (and, given `shares`, the owners' shares) are the store's to keep, whatever `select`
 * returned.
 */
export function claimChosen<Row>(
  picked: readonly ClaimCandidate[],
  budget: number,
  claim: ClaimRun,
  store: ClaimRoundStore<Row>,
  shares?: ClaimShareKeeper,
): ClaimedRun[] {
  const claimed: ClaimedRun[] = [];
  if (budget <= 0) return claimed;
  for (const decision of decisions(picked, claim, store, shares)) {
    const written = store.writeClaims([decision]);
    if (written.length === 0) continue;
    claimed.push(...written);
    shares?.claimed(decision.candidate.owner);
    if (claimed.length >= budget) break;
  }
  return claimed;
}
