/**
 * The claim path's plans do not walk `runs` (docs/storage.md#the-claim-path-on-postgresql): with 100,000
 * terminal runs in the table and 10,000 idle tasks, as created and after `ANALYZE`, every hot statement the store runs in a
 * burst (admission, the claim, the batched launch and completion, the wake-up and sweep reads) is
 * explained where it runs, as a custom and as a generic plan, and none scans `runs`, `tasks` or
 * `task_state` whole (admission finds the due tasks through task_state_due_idx).
 * A structural check, not a timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { explainingPool, seedHistory, sequentialScansOf } from "../../../../bench/lib/hot-plans.js";
import type { HotPlan } from "../../../../bench/lib/hot-plans.js";
import { minute } from "../../../contract/fixtures.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import { runHotPath } from "../../../helpers/hot-path.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const onServer = database.kind === "server";

const CLAIM_STATEMENTS = [
  "claim: queued owners",
  "claim: queue head",
  "claim: take budget slots",
  "claim: lock chosen runs",
  "claim: write claims, bind slots",
  // The claim fused into admission: its read, and the insert binding the claimed runs' slots.
  "admission: fused claim read",
  "admission: insert claimed runs, bind slots",
  // A batch of launches and verdicts: read, then one fenced statement (the locking path, "batch: lock
  // runs" and "batch: write runs", runs only for runs that miss the fence).
  "batch: read runs and tasks",
  "batch: fenced write",
  // Due tasks through task_state_due_idx, and the next due instant from its first entry.
  "admission: due tasks",
  "wake: next due task",
  // Each queued run's queue timeout, its task read by primary key (a join once scanned `tasks`).
  "sweep: queue timeouts",
];

function escape(value: string): string {
  const escaped = value.replaceAll("'", "''");
  return value.includes("\\") ? ` E'${escaped.replaceAll("\\", "\\\\")}'` : `'${escaped}'`;
}

describe.skipIf(!onServer)("PostgreSQL hot path plans on 100,000 terminal runs", () => {
  it(
    "never scan runs or tasks sequentially, as created and after ANALYZE",
    { timeout: 120_000 },
    async () => {
      const pool = database.pool(4);
      const schema = database.freshSchema();
      const setup = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
      await setup.close();
      await seedHistory(pool, schema, 100_000);
      for (const analyzed of [false, true]) {
        if (analyzed) {
          await pool.query(
            `ANALYZE "${schema}".runs; ANALYZE "${schema}".tasks; ANALYZE "${schema}".task_state`,
          );
        }
        const plans: HotPlan[] = [];
        const store = await openPostgresStore({
          newId: createIdGenerator(),
          pool: explainingPool(pool, plans, escape),
          schema,
          migrate: false,
        });
        await runHotPath(store, minute(analyzed ? 20 : 10), 50);
        await store.close();
        const labels = new Set(plans.map((p) => p.label));
        for (const label of CLAIM_STATEMENTS) expect(labels, label).toContain(label);
        const scans = plans.flatMap((p) =>
          [p.custom, p.generic].flatMap((plan) =>
            [
              ...sequentialScansOf(plan, "runs"),
              ...sequentialScansOf(plan, "tasks"),
              ...sequentialScansOf(plan, "task_state"),
            ].map((line) => `${p.label}: ${line.trim()}`),
          ),
        );
        expect(scans, analyzed ? "after ANALYZE" : "as created").toEqual([]);
      }
    },
  );
});
