/**
 * The one contract every store passes (docs/architecture.md): `describeStoreContract(name, open)` registers the whole
 * suite for a store factory. `open` returns a fresh, empty, migrated store for each test; the suite closes
 * it afterwards. `PUNCTUAL_TEST_STORES` (a comma list of memory, sqlite, postgres) narrows which stores run.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/domain/ports/store.js";
import { describeAdmission } from "./cases/admission.js";
import { describeCalendars } from "./cases/calendars.js";
import { describeClaims } from "./cases/claims.js";
import { describeFairShare } from "./cases/fair-share.js";
import { describeUntoldCancel } from "./cases/untold-cancel.js";
import { describeFleetSettings } from "./cases/fleet-settings.js";
import type { ContractContext, CorruptTaskColumn } from "./cases/contract-context.js";
import { describeQuotaCounts } from "./cases/quota-counts.js";
import { describeRunBatches } from "./cases/run-batches.js";
import { describeRunChanges } from "./cases/run-changes.js";
import { describeRunRows } from "./cases/run-rows.js";
import { describeRunSearch } from "./cases/run-search.js";
import { describeReplicas } from "./cases/replicas.js";
import { describeSweeps } from "./cases/sweeps.js";
import { describeTaskBatch } from "./cases/task-batch.js";
import { describeTaskDefects } from "./cases/task-defects.js";
import { describeTaskKeys } from "./cases/task-keys.js";
import { describeTaskMutation } from "./cases/task-mutation.js";
import { describeTaskRows } from "./cases/task-rows.js";
import { describeUniqueRules } from "./cases/unique-rules.js";

export const STORE_NAMES = ["memory", "sqlite", "postgres"] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/**
 * The stores `PUNCTUAL_TEST_STORES` asks for (unset or empty: every store). A name that is no store is
 * refused, and under `CI` the variable may not leave a store out: a typo must not turn suites off.
 */
export function storesWanted(env: Readonly<Record<string, string | undefined>>): Set<StoreName> {
  const wanted = (env.PUNCTUAL_TEST_STORES ?? "")
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== "");
  const unknown = wanted.filter((entry) => !(STORE_NAMES as readonly string[]).includes(entry));
  if (unknown.length > 0) {
    throw new Error(
      `PUNCTUAL_TEST_STORES names no store: ${unknown.join(", ")} (known: ${STORE_NAMES.join(", ")})`,
    );
  }
  const stores = new Set<StoreName>(wanted.length === 0 ? STORE_NAMES : (wanted as StoreName[]));
  if ((env.CI ?? "") !== "" && stores.size < STORE_NAMES.length) {
    throw new Error(
      `PUNCTUAL_TEST_STORES=${env.PUNCTUAL_TEST_STORES ?? ""} leaves store suites out, which CI never does: unset it`,
    );
  }
  return stores;
}

/** Whether the store called `name` runs its contract suite in this process (`storesWanted`). */
export function storeEnabled(name: StoreName): boolean {
  return storesWanted(process.env).has(name);
}

/**
 * `corruptTaskColumn` writes into a stored task's JSON column behind the store's back, as a hand edit
 * of the database would (the task-defects cases).
 */
export function describeStoreContract(
  name: StoreName,
  open: () => Promise<Store>,
  corruptTaskColumn: CorruptTaskColumn,
): void {
  describe.skipIf(!storeEnabled(name))(`store contract: ${name}`, () => {
    let current: Store | null = null;

    beforeEach(async () => {
      current = await open();
    });

    afterEach(async () => {
      const store = current;
      current = null;
      await store?.close();
    });

    const context: ContractContext = {
      store: () => {
        if (current === null) throw new Error("the contract's store is opened per test");
        return current;
      },
      corruptTaskColumn,
    };

    describe("the store", () => {
      it("reports its schema as current once opened", async () => {
        const store = context.store();
        expect(store.kind).toBe(name);
        const status = await store.migrationStatus();
        expect(status.current).toBe(true);
        expect(status.pending).toEqual([]);
        await expect(store.migrate()).resolves.toMatchObject({ current: true, pending: [] });
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describeTaskRows(context);
    describeTaskKeys(context);
    describeTaskMutation(context);
    describeTaskBatch(context);
    describeTaskDefects(context);
    describeAdmission(context);
    describeClaims(context);
    describeFairShare(context);
    describeUntoldCancel(context);
    describeRunChanges(context);
    describeRunBatches(context);
    describeRunRows(context);
    describeRunSearch(context);
    describeFleetSettings(context);
    describeSweeps(context);
    describeReplicas(context);
    describeUniqueRules(context);
    describeCalendars(context);
    describeQuotaCounts(context);
  });
}
