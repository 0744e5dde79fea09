/**
 * Migration 35 (docs/storage.md#the-statements-of-one-fire-and-their-wal) rebuilds
 * `runs_owner_listing_idx` ascending. From a database of schema 34 holding runs of two owners and three
 * target kinds in several statuses, every run is kept, the index is ascending, and each owner's listing
 * (every filter path that walks it, page by page) reads the same runs in the same order; a run admitted
 * afterwards comes first.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { OwnerScope, RunSearch } from "../../../../src/domain/ports/queries.js";
import type { Store } from "../../../../src/domain/ports/store.js";
import {
  ALICE_SCOPE,
  BOB,
  BOB_SCOPE,
  agentTarget,
  handlerTarget,
  minute,
  webhookTarget,
} from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
} from "../../../contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

const SEARCHES: readonly Omit<RunSearch, "limit">[] = [
  {},
  { statuses: ["succeeded"] },
  { statuses: ["queued", "succeeded"] },
  { targetKind: "handler" },
];

/** Every run id of `scope`'s listing for `search`, page by page (pages of 2). */
async function listing(store: Store, scope: OwnerScope, search: Omit<RunSearch, "limit">) {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.runs.searchRuns(scope, {
      ...search,
      limit: 2,
      ...(cursor === undefined ? {} : { cursor }),
    });
    ids.push(...page.items.map((run) => run.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

describe("postgres migration 35 (the owners' listing appended to, not split)", () => {
  it("keeps every run, and every owner's listing reads the same runs in the same order", async () => {
    const older = await schemaAtVersion(database, 34);
    const { pool, schema, quoted: q, store: before } = older;
    for (const target of [agentTarget(), webhookTarget(), handlerTarget("work")]) {
      await insertTask(before, { target });
    }
    await insertTask(before, { target: handlerTarget("work"), owner: BOB });
    for (const m of [1, 2, 3]) await admitDue(before, minute(m));
    const claimed = await claimDue(before, minute(3), {
      limit: 5,
      handlerNames: new Set(["work"]),
    });
    expect(claimed.length).toBeGreaterThan(2);
    for (const run of claimed.slice(0, 3)) {
      await recordLaunch(before, run, minute(3));
      await recordCompletion(before, run.run.id, { status: "succeeded" }, minute(3));
    }
    const scopes = [ALICE_SCOPE, BOB_SCOPE];
    const listed = async (store: Store) => {
      const all: string[][] = [];
      for (const scope of scopes) {
        for (const search of SEARCHES) all.push(await listing(store, scope, search));
      }
      return all;
    };
    const listedBefore = await listed(before);
    expect(listedBefore[0]).toHaveLength(9);
    await before.close();
    const rows = async () =>
      (await pool.query(`SELECT to_jsonb(x) AS row FROM ${q}.runs AS x ORDER BY x.id`)).rows;
    const stored = await rows();

    await older.migrate();
    expect(await rows()).toEqual(stored);
    const index = await pool.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = $1::text` +
        ` AND indexname = 'runs_owner_listing_idx'`,
      [schema],
    );
    expect((index.rows[0] as { indexdef: string }).indexdef).toMatch(
      /\(owner, target_kind, scheduled_for, id\)$/,
    );
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await listed(after)).toEqual(listedBefore);
    // The store carries on: the next minute's runs come first in the owner's listing.
    await admitDue(after, minute(4));
    const newest = await after.runs.searchRuns(ALICE_SCOPE, { limit: 3 });
    expect(newest.items.map((run) => run.scheduledFor)).toEqual([minute(4), minute(4), minute(4)]);
    await after.close();
  });
});
