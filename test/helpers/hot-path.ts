/**
 * One pass of the hot path through a store, as a replica takes it in a burst: `count` once tasks due at
 * `now` (after the fixtures' T0) are admitted, claimed, launched and completed in batches; a few admitted
 * with the claim fused in; then runs
 * queued in one thread are claimed (the claim's wider read); and the wake-up and sweep reads run.
 * The structural plan tests and `bench/explain-hot-path.ts` run it to see every hot statement execute.
 */
import type { Store } from "../../src/domain/ports/store.js";
import type { Instant } from "../../src/domain/time.js";
import { applyLaunchOutcome, completeRun } from "../../src/domain/run-transitions.js";
import { agentTarget, onceAt, reuseThread } from "../contract/fixtures.js";
import {
  POLICY,
  admitAndClaim,
  admitDue,
  cancelOneRun,
  claimDue,
  insertTask,
  ledger,
} from "../contract/store-steps.js";

export async function runHotPath(store: Store, now: Instant, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await insertTask(store, { schedule: onceAt(now), target: agentTarget() });
  }
  await store.tasks.nextDueAt();
  await admitDue(store, now, count);
  const claimed = await claimDue(store, now, { limit: count, maxConcurrentRuns: 2 * count });
  await store.runs.changeRuns(
    claimed.map((c) => ({
      id: c.run.id,
      ...(c.run.claimToken === null ? {} : { token: c.run.claimToken }),
      decide: (run, task) =>
        applyLaunchOutcome(
          run,
          { kind: "launched", targetRunId: `t-${run.id}` },
          {
            now,
            task,
            policy: POLICY,
          },
        ),
    })),
  );
  await store.runs.changeRuns(
    claimed.map((c) => ({
      id: c.run.id,
      decide: (run, task) => completeRun(run, { status: "succeeded" }, { now, task }),
    })),
  );
  // Due tasks admitted with the claim fused in, the queue empty: their runs are inserted claimed.
  for (let i = 0; i < 4; i++) {
    await insertTask(store, { schedule: onceAt(now), target: agentTarget() });
  }
  await admitAndClaim(store, now, { limit: 4, maxConcurrentRuns: 4 * count });
  // Runs queued in one thread: the first read (as many runs as the claim may take) holds one claimable
  // run, its thread's head, so the claim reads the wider window and then locks the runs it chose.
  const thread = reuseThread(`hot-path-${now}`);
  const threadTasks = [];
  for (let i = 0; i < 4; i++) {
    threadTasks.push(
      await insertTask(store, { schedule: onceAt(now), target: agentTarget(), context: thread }),
    );
  }
  await admitDue(store, now, count);
  await claimDue(store, now, { limit: 2, maxConcurrentRuns: 4 * count });
  await store.runs.nextRunWakeAt();
  await store.runs.findExpiredClaims(now, 100);
  await store.runs.findPastDeadline(now, 100);
  await store.runs.findQueueTimeouts(now, 100);
  await store.runs.findLostHandlerRuns(now, 100);
  // The thread's runs still queued are cancelled: a pass leaves no run ready to claim, which would
  // stop the next pass's admission from fusing its claim (docs/storage.md#fused-admit-and-claim).
  for (const task of threadTasks) {
    for (const run of await ledger(store, task.id)) {
      if (run.status === "queued") await cancelOneRun(store, run.id, now);
    }
  }
}
