/**
 * The rows migration 25 (PostgreSQL) and 16 (SQLite) upgrade (docs/semantics.md#threads): Alice and Bob
 * each bind the webhook label `nightly` and run a handler on a fresh thread, and an agent task binds a
 * server's thread. Alice's nightly run is launching (it holds a budget slot), Bob's is queued: before the
 * migration both were on the one thread `webhook`/`nightly`, so Bob's could not start beside hers.
 */
import type { RunId } from "../../src/domain/ids.js";
import type { Store } from "../../src/domain/ports/store.js";
import {
  ALICE,
  ALL,
  BOB,
  agentTarget,
  handlerTarget,
  minute,
  onceAt,
  reuseThread,
  webhookTarget,
} from "../contract/fixtures.js";
import { claimDue, insertTask, triggerRun } from "../contract/store-steps.js";

export interface OwnerThreadRuns {
  readonly alice: RunId;
  readonly bob: RunId;
}

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

/** Writes the rows, launching Alice's nightly run; answers the two nightly runs. */
export async function writeOwnerThreads(store: Store): Promise<OwnerThreadRuns> {
  const nightly = { ...IDLE, target: webhookTarget(), context: reuseThread("nightly") };
  const alice = await insertTask(store, { ...nightly, owner: ALICE });
  const bob = await insertTask(store, { ...nightly, owner: BOB });
  const handler = await insertTask(store, { ...IDLE, owner: BOB, target: handlerTarget("work") });
  const agent = await insertTask(store, {
    ...IDLE,
    target: agentTarget("main"),
    context: reuseThread("t-1"),
  });
  const first = await triggerRun(store, ALL, alice.id, "a", minute(0, 1));
  const claimed = await claimDue(store, minute(1), { limit: 1 });
  if (claimed[0]?.run.id !== first!.id) throw new Error("Alice's nightly run was not claimed");
  const second = await triggerRun(store, ALL, bob.id, "b", minute(1, 1));
  await triggerRun(store, ALL, handler.id, "h", minute(1, 2));
  await triggerRun(store, ALL, agent.id, "g", minute(1, 3));
  return { alice: first!.id, bob: second!.id };
}

/**
 * The SQL that turns `table`'s rows back into what the code before the migration wrote; `kind` is the
 * dialect's expression of the text before the scope's first `:`.
 */
export function unscopedThreads(table: string, kind: string): string {
  return (
    `UPDATE ${table} SET thread_scope = ${kind}` +
    ` WHERE thread_scope LIKE 'webhook:%' OR thread_scope LIKE 'handler:%'`
  );
}
