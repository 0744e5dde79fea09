/**
 * Contract: task keys (docs/semantics.md#task-keys). A key and a group round-trip; a key is unique
 * among an owner's tasks not deleted (a taken key is `key_taken` and writes nothing, even for two
 * inserts at once); a deleted task frees its key; lookups and lists by key and group are owner-scoped.
 */
import { describe, expect, it } from "vitest";
import { KeyTakenError } from "../../../src/domain/errors.js";
import { ALICE, ALICE_SCOPE, ALL, BOB, BOB_SCOPE, T0, buildTask } from "../fixtures.js";
import { insertTask, remove } from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

export function describeTaskKeys(ctx: ContractContext): void {
  describe("task keys", () => {
    it("round-trips a key and a group, and finds the task by its owner and key", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { key: "billing:nightly.v2", group: "billing" });
      expect(await store.tasks.findTask(ALL, task.id)).toEqual(task);
      expect(await store.tasks.findTaskByKey(ALICE, "billing:nightly.v2")).toEqual(task);
      expect(await store.tasks.findTaskByKey(BOB, "billing:nightly.v2")).toBeNull();
      expect(await store.tasks.findTaskByKey(ALICE, "billing:nightly")).toBeNull();
      const plain = await insertTask(store);
      expect((await store.tasks.findTask(ALL, plain.id))?.key).toBeNull();
    });

    it("refuses a second task of the owner with the same key, writing nothing", async () => {
      const store = ctx.store();
      const first = await insertTask(store, { key: "k" });
      const second = buildTask({ key: "k" });
      const error = await store.tasks.insertTask(second).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyTakenError);
      expect((error as KeyTakenError).key).toBe("k");
      expect(await store.tasks.findTask(ALL, second.id)).toBeNull();
      expect((await store.tasks.findTaskByKey(ALICE, "k"))?.id).toBe(first.id);
      // Another owner's key is another namespace; tasks without a key never clash.
      await insertTask(store, { key: "k", owner: BOB });
      await insertTask(store);
      await insertTask(store);
    });

    it("lets exactly one of two inserts of one key at the same instant win", async () => {
      const store = ctx.store();
      const racers = [buildTask({ key: "race" }), buildTask({ key: "race" })];
      const outcomes = await Promise.allSettled(racers.map((t) => store.tasks.insertTask(t)));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const refused = outcomes.find((o) => o.status === "rejected");
      expect(refused?.status === "rejected" ? refused.reason : null).toBeInstanceOf(KeyTakenError);
      const page = await store.tasks.listTasks(ALICE_SCOPE, { key: "race", limit: 10 });
      expect(page.items).toHaveLength(1);
    });

    it("frees the key of a deleted task", async () => {
      const store = ctx.store();
      const old = await insertTask(store, { key: "k" });
      await remove(store, old.id, T0);
      expect(await store.tasks.findTaskByKey(ALICE, "k")).toBeNull();
      const fresh = await insertTask(store, { key: "k" });
      expect((await store.tasks.findTaskByKey(ALICE, "k"))?.id).toBe(fresh.id);
    });

    it("lists by key and by group within the scope", async () => {
      const store = ctx.store();
      const a = await insertTask(store, { key: "a", group: "billing" });
      const b = await insertTask(store, { key: "b", group: "billing" });
      await insertTask(store, { key: "c", group: "reports" });
      await insertTask(store, { key: "a", group: "billing", owner: BOB });
      const billing = await store.tasks.listTasks(ALICE_SCOPE, { group: "billing", limit: 10 });
      expect(billing.items.map((t) => t.id)).toEqual([a.id, b.id]);
      const byKey = await store.tasks.listTasks(ALICE_SCOPE, { key: "b", limit: 10 });
      expect(byKey.items.map((t) => t.id)).toEqual([b.id]);
      const bobs = await store.tasks.listTasks(BOB_SCOPE, { group: "billing", limit: 10 });
      expect(bobs.items.map((t) => t.key)).toEqual(["a"]);
      const everyA = await store.tasks.listTasks(ALL, { key: "a", limit: 10 });
      expect(everyA.items).toHaveLength(2);
    });

    it("searches titles ignoring ASCII case, and keys exactly, within the scope", async () => {
      const store = ctx.store();
      const report = await insertTask(store, { title: "Nightly REPORT for Zoë", key: "r-1" });
      const export_ = await insertTask(store, { title: "Weekly export", key: "report-2" });
      await insertTask(store, { title: "Report of Bob", owner: BOB });
      const search = async (text: string): Promise<readonly string[]> =>
        (await store.tasks.listTasks(ALICE_SCOPE, { search: text, limit: 10 })).items.map(
          (t) => t.id,
        );
      expect(await search("report")).toEqual([report.id]);
      expect(await search("night")).toEqual([report.id]);
      expect(await search("report-2")).toEqual([export_.id]);
      // Like LIKE's wildcards, nothing in the text is a pattern.
      expect(await search("%")).toEqual([]);
      expect(await search("_")).toEqual([]);
      // Non-ASCII letters match only as written.
      expect(await search("Zoë")).toEqual([report.id]);
      expect(await search("ZOË")).toEqual([]);
      const everyone = await store.tasks.listTasks(ALL, { search: "report", limit: 10 });
      expect(everyone.items).toHaveLength(2);
    });
  });
}
