/**
 * Claim selection (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch): which queued runs a replica may claim now: per-thread FIFO, per-task
 * FIFO for exclusive runs, `not_before`, busy threads and tasks, the global budget, handler names.
 */
import { describe, expect, it } from "vitest";
import {
  selectClaimable,
  shareForBudget,
  shareLimitsOwners,
  threadKey,
  wholeBudgetShare,
} from "../../src/domain/claim.js";
import type { ClaimCandidate, ClaimSelectionInput } from "../../src/domain/claim.js";
import type { OwnerId, RunId, TaskId, ThreadId } from "../../src/domain/ids.js";
import { MINUTE, plus, SECOND, T0 } from "./builders.js";

let order = 0;

/** A queued run of task `task` on thread `thread` (scope `handler` unless given), queued in call order. */
function candidate(
  id: string,
  overrides: Partial<Omit<ClaimCandidate, "taskId" | "threadId">> & {
    task?: string;
    thread?: string;
  } = {},
): ClaimCandidate {
  const { task, thread, ...rest } = overrides;
  order++;
  return {
    id: id as RunId,
    taskId: (task ?? `task-${id}`) as TaskId,
    owner: "alice" as OwnerId,
    threadScope: "webhook",
    threadId: (thread ?? `thread-${id}`) as ThreadId,
    exclusive: true,
    notBefore: T0,
    queuedAt: plus(T0, order),
    handlerName: null,
    ...rest,
  };
}

function select(
  candidates: ClaimCandidate[],
  overrides: Partial<Omit<ClaimSelectionInput, "candidates">> = {},
): string[] {
  return selectClaimable({
    candidates,
    busyThreads: new Set(),
    busyTasks: new Set(),
    budget: 16,
    now: T0,
    handlerNames: new Set(["log"]),
    ...overrides,
  }).map((c) => c.id);
}

describe("selectClaimable", () => {
  it("claims every due run of distinct threads and tasks, in claim order", () => {
    expect(select([candidate("a"), candidate("b"), candidate("c")])).toEqual(["a", "b", "c"]);
  });

  describe("the global budget", () => {
    it("claims nothing when the budget is exhausted", () => {
      expect(select([candidate("a"), candidate("b")], { budget: 0 })).toEqual([]);
    });

    it("claims only into the remaining budget, oldest first", () => {
      expect(select([candidate("a"), candidate("b"), candidate("c")], { budget: 2 })).toEqual([
        "a",
        "b",
      ]);
    });

    it("does not spend budget on runs it cannot claim", () => {
      const runs = [
        candidate("a", { notBefore: plus(T0, MINUTE) }),
        candidate("b"),
        candidate("c"),
      ];
      expect(select(runs, { budget: 2 })).toEqual(["b", "c"]);
    });
  });

  describe("not_before", () => {
    it("leaves a run whose not_before has not passed, and claims one exactly at it", () => {
      const runs = [
        candidate("a", { notBefore: plus(T0, SECOND) }),
        candidate("b", { notBefore: T0 }),
      ];
      expect(select(runs)).toEqual(["b"]);
    });
  });

  describe("per-thread FIFO", () => {
    it("claims only the head of a thread's queue", () => {
      const runs = [candidate("a", { thread: "t" }), candidate("b", { thread: "t" })];
      expect(select(runs)).toEqual(["a"]);
    });

    it("keeps later runs of a thread waiting behind a head that is not yet due (busy back-off)", () => {
      const runs = [
        candidate("a", { thread: "t", notBefore: plus(T0, MINUTE) }),
        candidate("b", { thread: "t" }),
      ];
      expect(select(runs)).toEqual([]);
    });

    it("claims nothing on a thread that has a launching or running run", () => {
      const runs = [candidate("a", { thread: "t" }), candidate("b")];
      expect(select(runs, { busyThreads: new Set([threadKey("webhook", "t")]) })).toEqual(["b"]);
    });

    it("tells threads apart by scope: the same id in two scopes is two threads", () => {
      const runs = [
        candidate("a", { thread: "t", threadScope: "agent:one" }),
        candidate("b", { thread: "t", threadScope: "agent:two" }),
      ];
      expect(select(runs)).toEqual(["a", "b"]);
      expect(select(runs, { busyThreads: new Set([threadKey("agent:one", "t")]) })).toEqual(["b"]);
    });

    it("holds the FIFO across tasks sharing one thread", () => {
      const runs = [
        candidate("a", { task: "x", thread: "shared", notBefore: plus(T0, MINUTE) }),
        candidate("b", { task: "y", thread: "shared" }),
      ];
      expect(select(runs)).toEqual([]);
    });
  });

  describe("per-task FIFO for exclusive runs", () => {
    it("claims only the oldest exclusive run of a task, even on fresh threads", () => {
      const runs = [candidate("a", { task: "x" }), candidate("b", { task: "x" })];
      expect(select(runs)).toEqual(["a"]);
    });

    it("keeps a task's next run waiting while its active run holds the task's slot (cancel_other)", () => {
      const runs = [candidate("new", { task: "x" })];
      expect(select(runs, { busyTasks: new Set(["x" as TaskId]) })).toEqual([]);
    });

    it("claims several non-exclusive (allow_all) runs of one task at once, even if the task is busy", () => {
      const runs = [
        candidate("a", { task: "x", exclusive: false }),
        candidate("b", { task: "x", exclusive: false }),
      ];
      expect(select(runs, { busyTasks: new Set(["x" as TaskId]) })).toEqual(["a", "b"]);
    });

    it("keeps a task's later exclusive runs behind an older one that is not yet due (retry back-off)", () => {
      const runs = [
        candidate("a", { task: "x", notBefore: plus(T0, MINUTE) }),
        candidate("b", { task: "x" }),
      ];
      expect(select(runs)).toEqual([]);
    });
  });

  describe("handler names", () => {
    it("leaves handler runs this replica cannot run for the replicas that can", () => {
      const runs = [
        candidate("a", { threadScope: "handler", handlerName: "billing" }),
        candidate("b", { threadScope: "handler", handlerName: "log" }),
        candidate("c"),
      ];
      expect(select(runs)).toEqual(["b", "c"]);
    });

    it("keeps later runs of the same thread behind a handler run it cannot run", () => {
      const runs = [
        candidate("a", { thread: "t", handlerName: "billing" }),
        candidate("b", { thread: "t", handlerName: "log" }),
      ];
      expect(select(runs)).toEqual([]);
    });
  });

  describe("the owners' share (docs/semantics.md#fair-share)", () => {
    const of = (owner: string) => ({ owner: owner as OwnerId });
    const share = (max: number, overrides: Record<string, number> = {}) => ({
      maxActiveRuns: max,
      overrides: new Map(Object.entries(overrides)),
    });

    it("takes the owners in turn, in the order of their queue heads", () => {
      const runs = [
        candidate("b1", of("bob")),
        candidate("b2", of("bob")),
        candidate("b3", of("bob")),
        candidate("a1", of("alice")),
        candidate("c1", of("carol")),
        candidate("a2", of("alice")),
      ];
      expect(select(runs, { budget: 4 })).toEqual(["b1", "a1", "c1", "b2"]);
    });

    it("keeps each owner within its share, counting what it already holds", () => {
      const runs = ["b1", "b2", "b3", "b4"].map((id) => candidate(id, of("bob")));
      expect(select(runs, { share: share(3) })).toEqual(["b1", "b2", "b3"]);
      expect(select(runs, { share: share(3), ownerActive: new Map([["bob", 2]]) })).toEqual(["b1"]);
      expect(select(runs, { share: share(3), ownerActive: new Map([["bob", 3]]) })).toEqual([]);
      expect(select(runs, { share: share(3, { bob: 1 }) })).toEqual(["b1"]);
    });

    it("gives the slots an owner at its share leaves to the owners behind it", () => {
      const runs = [
        candidate("b1", of("bob")),
        candidate("b2", of("bob")),
        candidate("a1", of("alice")),
        candidate("a2", of("alice")),
      ];
      const picked = select(runs, { share: share(2), ownerActive: new Map([["bob", 2]]) });
      expect(picked).toEqual(["a1", "a2"]);
    });

    it("never offers a run marked queued behind an earlier run of its thread", () => {
      const runs = [candidate("a", { queuedBehind: true }), candidate("b")];
      expect(select(runs)).toEqual(["b"]);
    });

    it("stops in the middle of a round when the budget runs out", () => {
      const runs = [
        candidate("b1", of("bob")),
        candidate("a1", of("alice")),
        candidate("c1", of("carol")),
        candidate("b2", of("bob")),
      ];
      expect(select(runs, { budget: 2 })).toEqual(["b1", "a1"]);
    });

    it("orders runs queued at the same instant by id, whatever order they are read in", () => {
      const same = (id: string, owner: string) => ({ ...candidate(id, of(owner)), queuedAt: T0 });
      const runs = [
        same("r3", "carol"),
        same("r1", "alice"),
        same("r2", "bob"),
        same("r1", "alice"),
      ];
      expect(select(runs, { budget: 2 })).toEqual(["r1", "r2"]);
    });

    it("says whether a share caps any owner below the budget", () => {
      expect(shareLimitsOwners(wholeBudgetShare(10), 10)).toBe(false);
      expect(shareLimitsOwners(share(9), 10)).toBe(true);
      expect(shareLimitsOwners(share(10, { bob: 12 }), 10)).toBe(false);
      expect(shareLimitsOwners(share(10, { bob: 3 }), 10)).toBe(true);
      // The whole budget caps nobody: every run fits.
      const runs = ["b1", "b2", "b3"].map((id) => candidate(id, of("bob")));
      expect(select(runs, { share: wholeBudgetShare(3), budget: 3 })).toEqual(["b1", "b2", "b3"]);
    });

    it("follows the budget with a share given as a fraction of it, never below one run", () => {
      const half = { ...share(5), fractionOfBudget: 0.5 };
      expect(shareForBudget(half, 10)).toBe(half);
      expect(shareForBudget(half, 7).maxActiveRuns).toBe(3);
      expect(shareForBudget(half, 1).maxActiveRuns).toBe(1);
      const fixed = share(5);
      expect(shareForBudget(fixed, 100)).toBe(fixed);
    });
  });
});
