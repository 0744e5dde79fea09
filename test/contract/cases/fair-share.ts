/**
 * Contract: the owners' share of the budget (docs/semantics.md#fair-share). One owner holds at most its
 * `max_active_runs_per_owner` launching or running runs, even when nobody else waits; claims take the
 * owners with queued work in turn, each from its own queue head, so no owner waits behind another's
 * backlog; a thread shared by two owners' tasks stays FIFO across them.
 */
import { describe, expect, it } from "vitest";
import type { OwnerShare } from "../../../src/domain/claim.js";
import type { TaskId } from "../../../src/domain/ids.js";
import type { Run } from "../../../src/domain/run.js";
import type { Store } from "../../../src/domain/ports/store.js";
import type { Instant } from "../../../src/domain/time.js";
import { ALICE, ALL, BOB, T0, at, minute, onceAt, reuseThread } from "../fixtures.js";
import {
  claimAndLaunch,
  claimDue,
  insertTask,
  recordCompletion,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

function share(maxActiveRuns: number, overrides: Record<string, number> = {}): OwnerShare {
  return { maxActiveRuns, overrides: new Map(Object.entries(overrides)) };
}

async function triggerMany(store: Store, id: TaskId, count: number, from: Instant): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < count; i++) {
    runs.push((await triggerRun(store, ALL, id, `key-${i}`, at(from - T0 + i)))!);
  }
  return runs;
}

export function describeFairShare(ctx: ContractContext): void {
  describe("fair share across owners", () => {
    it("keeps one owner within its share even when nobody else waits", async () => {
      const store = ctx.store();
      const bob = await insertTask(store, { ...IDLE, owner: BOB });
      await triggerMany(store, bob.id, 5, minute(0, 1));
      const first = await claimAndLaunch(store, minute(1), { share: share(2) });
      expect(first).toHaveLength(2);
      expect(await claimDue(store, minute(1, 1), { share: share(2) })).toEqual([]);
      // A finished run gives its place back to the same owner.
      await recordCompletion(store, first[0]!.id, { status: "succeeded" }, minute(1, 2));
      expect(await claimDue(store, minute(1, 3), { share: share(2) })).toHaveLength(1);
    });

    it("takes the owners in turn, each from its own queue head", async () => {
      const store = ctx.store();
      const bob = await insertTask(store, { ...IDLE, owner: BOB });
      const alice = await insertTask(store, { ...IDLE, owner: ALICE });
      const bobs = await triggerMany(store, bob.id, 6, minute(0, 1));
      const [alices] = await triggerMany(store, alice.id, 1, minute(0, 30));
      // Bob's backlog fills a whole claim's window, and Alice's run still goes in the first claim.
      const claimed = await claimDue(store, minute(1), { limit: 2, maxConcurrentRuns: 2 });
      expect(claimed.map((c) => c.run.id)).toEqual([bobs[0]!.id, alices!.id]);
    });

    it("gives an owner named in the overrides its own maximum", async () => {
      const store = ctx.store();
      const bob = await insertTask(store, { ...IDLE, owner: BOB });
      const alice = await insertTask(store, { ...IDLE, owner: ALICE });
      await triggerMany(store, bob.id, 4, minute(0, 1));
      await triggerMany(store, alice.id, 4, minute(0, 10));
      const claimed = await claimDue(store, minute(1), { share: share(3, { bob: 1 }) });
      const owners = claimed.map((c) => c.run.owner).sort();
      expect(owners).toEqual(["alice", "alice", "alice", "bob"]);
    });

    it("counts launching and running runs against the share", async () => {
      const store = ctx.store();
      const bob = await insertTask(store, { ...IDLE, owner: BOB });
      await triggerMany(store, bob.id, 3, minute(0, 1));
      // One run launched and running, one claimed and still launching.
      expect(await claimAndLaunch(store, minute(0, 5), { limit: 1 })).toHaveLength(1);
      expect(await claimDue(store, minute(0, 6), { limit: 1 })).toHaveLength(1);
      expect(await claimDue(store, minute(1), { share: share(2) })).toEqual([]);
      expect(await claimDue(store, minute(1), { share: share(3) })).toHaveLength(1);
    });

    it("keeps a thread shared by two owners FIFO beyond an owner's window", async () => {
      const store = ctx.store();
      const bob = await insertTask(store, { ...IDLE, owner: BOB });
      const bobShared = await insertTask(store, { ...IDLE, owner: BOB, context: reuseThread("t") });
      const aliceShared = await insertTask(store, {
        ...IDLE,
        owner: ALICE,
        context: reuseThread("t"),
      });
      const bobs = await triggerMany(store, bob.id, 3, minute(0, 1));
      const [bobInThread] = await triggerMany(store, bobShared.id, 1, minute(0, 10));
      const [aliceInThread] = await triggerMany(store, aliceShared.id, 1, minute(0, 20));
      // Bob's run on thread "t" is not among the two runs read of Bob's queue; Alice's, behind it, waits.
      const claimed = await claimDue(store, minute(1), { limit: 2 });
      expect(claimed.map((c) => c.run.id)).toEqual([bobs[0]!.id, bobs[1]!.id]);
      const next = await claimDue(store, minute(1), { limit: 2 });
      expect(next.map((c) => c.run.id)).toEqual([bobs[2]!.id, bobInThread!.id]);
      expect(await claimDue(store, minute(1), { limit: 2 })).toEqual([]);
      expect(aliceInThread!.status).toBe("queued");
    });
  });
}
