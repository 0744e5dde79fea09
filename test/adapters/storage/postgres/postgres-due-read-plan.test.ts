/**
 * Admission's due read locks the `task_state` rows before it joins their definitions
 * (docs/storage.md#the-due-read-locks-before-it-joins): a row another replica holds is skipped where
 * it is met, in the index scan under the lock, without a probe of `tasks` and a task's whole projection
 * for each (two replicas sharing a burst skip each other's batches). A structural check of the plan the
 * server runs, custom and generic, not a timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { explainingPool } from "../../../../bench/lib/hot-plans.js";
import type { HotPlan } from "../../../../bench/lib/hot-plans.js";
import { minute } from "../../../contract/fixtures.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import { runHotPath } from "../../../helpers/hot-path.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const onServer = database.kind === "server";

function escape(value: string): string {
  const escaped = value.replaceAll("'", "''");
  return value.includes("\\") ? ` E'${escaped.replaceAll("\\", "\\\\")}'` : `'${escaped}'`;
}

/** The lines of `plan` under its `LockRows` node (more indented than it, up to the next line that is not). */
function underLockRows(plan: string): string[] {
  const lines = plan.split("\n");
  const at = lines.findIndex((line) => line.includes("LockRows"));
  if (at < 0) throw new Error(`no LockRows in the plan:\n${plan}`);
  const depth = (line: string): number => line.length - line.trimStart().length;
  const own = depth((lines[at] as string).replace("->", "  "));
  const under: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (depth(line.replace("->", "  ")) <= own) break;
    under.push(line.trim());
  }
  return under;
}

describe.skipIf(!onServer)("PostgreSQL admission's due read", () => {
  it("locks task_state rows before it reads their tasks, in the custom and the generic plan", async () => {
    const pool = database.pool(2);
    const schema = database.freshSchema();
    const plans: HotPlan[] = [];
    const store = await openPostgresStore({
      newId: createIdGenerator(),
      pool: explainingPool(pool, plans, escape),
      schema,
    });
    await runHotPath(store, minute(10), 5);
    await store.close();
    const due = plans.find((p) => p.label === "admission: due tasks");
    expect(due, "the due read was explained").toBeDefined();
    for (const plan of [due?.custom ?? "", due?.generic ?? ""]) {
      const locked = underLockRows(plan);
      expect(
        locked.some((line) => / on task_state\b/.test(line)),
        plan,
      ).toBe(true);
      expect(
        locked.filter((line) => / on tasks\b/.test(line)),
        plan,
      ).toEqual([]);
    }
  });
});
