/**
 * The HTTP API's own records in every store: API tokens (hash only, revocable) and `Idempotency-Key`
 * reservations (one winner per key, completed or released).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Store } from "../../../src/domain/ports/store.js";
import { createMemoryStore } from "../../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../../src/adapters/storage/sqlite/sqlite-store.js";
import { tokenServiceFor } from "../../../src/composition-stores.js";
import type { OwnerId } from "../../../src/domain/ids.js";
import type { Instant } from "../../../src/domain/time.js";
import { createPostgresTestDatabase } from "../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../helpers/postgres.js";
import { tempFiles } from "./sqlite/sqlite-temp.js";

const files = tempFiles("api-records");
let postgres: PostgresTestDatabase | null = null;
afterAll(async () => {
  files.remove();
  await postgres?.drop();
});

const STORES: [string, () => Promise<Store>][] = [
  ["memory", () => Promise.resolve(createMemoryStore({ newId: createIdGenerator() }))],
  ["sqlite", () => openSqliteStore({ path: files.path(), newId: createIdGenerator() })],
  [
    "postgres",
    async () => {
      postgres ??= await createPostgresTestDatabase();
      return postgres.openStore();
    },
  ],
];

const at = (ms: number) => ms as Instant;

describe.each(STORES)("%s store", (_name, open) => {
  it("stores tokens by hash only, authenticates them, lists and revokes them", async () => {
    const store = await open();
    try {
      const tokens = tokenServiceFor(store);
      const made = await tokens.create({ owner: "alice", label: "ci" }, at(1_000));
      const root = await tokens.create({ owner: "ops", admin: true }, at(2_000));
      expect(made.secret).toMatch(/^pct_[A-Za-z0-9_-]{43}$/);
      const found = await tokens.authenticate(made.secret);
      expect(found?.actor).toEqual({ owner: "alice", admin: false });
      expect((await tokens.authenticate(root.secret))?.actor.admin).toBe(true);
      expect(await tokens.authenticate("pct_unknown")).toBeNull();
      const listed = await tokens.list();
      expect(listed.map((t) => [t.owner, t.label, t.createdAt])).toEqual([
        ["alice", "ci", 1_000],
        ["ops", null, 2_000],
      ]);
      expect(JSON.stringify(listed)).not.toContain(made.secret);
      await tokens.revoke(made.token.id, at(3_000));
      expect(await tokens.authenticate(made.secret)).toBeNull();
      await expect(tokens.revoke(made.token.id, at(4_000))).rejects.toMatchObject({
        code: "not_found",
      });
      expect(await tokens.hasActiveToken()).toBe(true);
      await expect(tokens.create({ owner: "no spaces" }, at(5_000))).rejects.toMatchObject({
        code: "validation_failed",
      });
    } finally {
      await store.close();
    }
  });

  it("reserves an idempotency key once, then completes or releases it", async () => {
    const store = await open();
    try {
      const records = store.idempotency!;
      const scope = { owner: "alice" as OwnerId, route: "POST /v1/tasks", key: "k" };
      expect(await records.reserve(scope, "h1", at(1))).toBeNull();
      expect(await records.reserve(scope, "h1", at(2))).toMatchObject({
        requestHash: "h1",
        statusCode: 0,
      });
      await records.complete(scope, 201, { task: { id: "t1" } });
      expect(await records.reserve(scope, "h2", at(3))).toEqual({
        requestHash: "h1",
        statusCode: 201,
        response: { task: { id: "t1" } },
        createdAt: 1,
      });
      await records.release(scope); // a completed record stays
      expect((await records.reserve(scope, "h1", at(4)))?.statusCode).toBe(201);
      const other = { ...scope, owner: "bob" as OwnerId };
      expect(await records.reserve(other, "h1", at(5))).toBeNull();
      await records.release(other);
      expect(await records.reserve(other, "h9", at(6))).toBeNull();
    } finally {
      await store.close();
    }
  });

  it("purges idempotency records made before an instant, oldest first, a batch at a time", async () => {
    const store = await open();
    try {
      const records = store.idempotency!;
      const scope = (key: string) => ({ owner: "alice" as OwnerId, route: "POST /v1/tasks", key });
      for (const [key, made] of [
        ["a", 10],
        ["b", 20],
        ["c", 30],
        ["d", 40],
      ] as const) {
        expect(await records.reserve(scope(key), "h", at(made))).toBeNull();
        await records.complete(scope(key), 201, { key });
      }
      expect(await records.purge(at(10), 10)).toBe(0);
      expect(await records.purge(at(35), 1)).toBe(1);
      // "a" went first: reserving it again is a new reservation; "b" is still remembered.
      expect(await records.reserve(scope("a"), "h", at(50))).toBeNull();
      expect((await records.reserve(scope("b"), "h", at(50)))?.statusCode).toBe(201);
      expect(await records.purge(at(35), 10)).toBe(2);
      expect(await records.reserve(scope("c"), "h", at(60))).toBeNull();
      expect((await records.reserve(scope("d"), "h", at(60)))?.statusCode).toBe(201);
    } finally {
      await store.close();
    }
  });
});
