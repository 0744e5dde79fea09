/**
 * The store-independent steps of a claim round (src/adapters/storage/shared/claim-round.ts): the budget
 * cap, the owners' shares, runs no longer queued and refused writes skipped, one fresh token per claim.
 * The stores' own behaviour is the contract suite's (test/contract/).
 */
import { describe, expect, it } from "vitest";
import type { ClaimCandidate } from "../../../../src/domain/claim.js";
import type { FencingToken, OwnerId } from "../../../../src/domain/ids.js";
import type { ClaimRequest } from "../../../../src/domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../../../src/domain/run.js";
import type { Task } from "../../../../src/domain/task.js";
import {
  claimBudget,
  claimChosen,
  decideClaims,
} from "../../../../src/adapters/storage/shared/claim-round.js";
import type { ClaimRoundStore } from "../../../../src/adapters/storage/shared/claim-round.js";

interface Row {
  readonly id: string;
  readonly status: RunStatus;
}

const TASK = { id: "task" } as unknown as Task;

function candidate(id: string, owner = "a"): ClaimCandidate {
  return { id, owner } as unknown as ClaimCandidate;
}

function store(rows: readonly Row[], refused: readonly string[] = []): ClaimRoundStore<Row> {
  return {
    rowOf: (c) => rows.find((row) => row.id === c.id),
    statusOf: (row) => row.status,
    claimable: (row) => ({ run: { id: row.id, status: row.status } as unknown as Run, task: TASK }),
    writeClaims: (decisions) =>
      decisions.map((d) => d.claimed).filter((c) => !refused.includes(c.run.id)),
  };
}

const claim = (run: Run, _task: Task, token: FencingToken): Run => ({
  ...run,
  status: "launching",
  claimToken: token,
});

describe("claimBudget", () => {
  const request = (maxConcurrentRuns: number, limit: number): ClaimRequest =>
    ({ maxConcurrentRuns, limit }) as unknown as ClaimRequest;

  it("is the free slots, at most the limit, never below zero", () => {
    expect(claimBudget(request(10, 4), 3)).toBe(4);
    expect(claimBudget(request(10, 4), 8)).toBe(2);
    expect(claimBudget(request(10, 4), 12)).toBe(0);
  });
});

describe("claimChosen", () => {
  const queued = (id: string): Row => ({ id, status: "queued" });

  it("claims in order up to the budget, each with its own token", () => {
    const rows = ["r1", "r2", "r3"].map(queued);
    const claimed = claimChosen(
      rows.map((r) => candidate(r.id)),
      2,
      claim,
      store(rows),
    );
    expect(claimed.map((c) => c.run.id)).toEqual(["r1", "r2"]);
    expect(claimed.every((c) => c.task === TASK && c.run.status === "launching")).toBe(true);
    expect(new Set(claimed.map((c) => c.run.claimToken)).size).toBe(2);
  });

  it("skips runs no longer queued, missing or refused by a slot key, without spending the budget", () => {
    const rows = [
      queued("r1"),
      { id: "r2", status: "running" as const },
      queued("r3"),
      queued("r4"),
    ];
    const picked = ["r1", "gone", "r2", "r3", "r4"].map((id) => candidate(id));
    const claimed = claimChosen(picked, 2, claim, store(rows, ["r3"]));
    expect(claimed.map((c) => c.run.id)).toEqual(["r1", "r4"]);
  });

  it("keeps the owners' shares, counting only the claims written", () => {
    const rows = ["a1", "a2", "b1", "a3"].map(queued);
    const held = new Map<OwnerId, number>();
    const shares = {
      admits: (owner: OwnerId) => (held.get(owner) ?? 0) < 1,
      claimed: (owner: OwnerId) => void held.set(owner, (held.get(owner) ?? 0) + 1),
    };
    const picked = [
      candidate("a1", "a"),
      candidate("a2", "a"),
      candidate("b1", "b"),
      candidate("a3", "a"),
    ];
    const claimed = claimChosen(picked, 10, claim, store(rows, ["a1"]), shares);
    expect(claimed.map((c) => c.run.id)).toEqual(["a2", "b1"]);
  });
});

describe("decideClaims", () => {
  const queued = (id: string): Row => ({ id, status: "queued" });

  it("decides in order up to the budget, skipping runs no longer queued or missing, without writing", () => {
    const rows = [
      queued("r1"),
      { id: "r2", status: "launching" as const },
      queued("r3"),
      queued("r4"),
    ];
    const picked = ["r1", "gone", "r2", "r3", "r4"].map((id) => candidate(id));
    const decided = decideClaims(picked, 2, claim, store(rows));
    expect(decided.map((d) => d.claimed.run.id)).toEqual(["r1", "r3"]);
    expect(decided.map((d) => d.before.id)).toEqual(["r1", "r3"]);
    expect(decided.map((d) => d.candidate.id)).toEqual(["r1", "r3"]);
    expect(new Set(decided.map((d) => d.claimed.run.claimToken)).size).toBe(2);
    expect(decideClaims(picked, 0, claim, store(rows))).toEqual([]);
  });

  it("keeps the owners' shares, counting each claim decided", () => {
    const rows = ["a1", "a2", "b1"].map(queued);
    const held = new Map<OwnerId, number>();
    const shares = {
      admits: (owner: OwnerId) => (held.get(owner) ?? 0) < 1,
      claimed: (owner: OwnerId) => void held.set(owner, (held.get(owner) ?? 0) + 1),
    };
    const picked = [candidate("a1", "a"), candidate("a2", "a"), candidate("b1", "b")];
    const decided = decideClaims(picked, 10, claim, store(rows), shares);
    expect(decided.map((d) => d.claimed.run.id)).toEqual(["a1", "b1"]);
  });
});
