/**
 * `PUNCTUAL_TEST_STORES` narrows the store contract suites on a developer's machine only: a name that is
 * no store is refused, and under `CI` it may not leave a suite out (docs/storage.md#the-store-contract).
 */
import { describe, expect, it } from "vitest";
import { storesWanted } from "./store-contract.js";

describe("PUNCTUAL_TEST_STORES", () => {
  it("runs every store when unset or empty", () => {
    expect([...storesWanted({})]).toEqual(["memory", "sqlite", "postgres"]);
    expect([...storesWanted({ PUNCTUAL_TEST_STORES: " , " })]).toHaveLength(3);
  });

  it("narrows to the stores named, in any case and spacing", () => {
    expect([...storesWanted({ PUNCTUAL_TEST_STORES: " Memory,sqlite " })]).toEqual([
      "memory",
      "sqlite",
    ]);
  });

  it("refuses a name that is no store rather than run no suite", () => {
    expect(() => storesWanted({ PUNCTUAL_TEST_STORES: "postgress" })).toThrow(
      /names no store: postgress/,
    );
    expect(() => storesWanted({ PUNCTUAL_TEST_STORES: "memory,sqllite" })).toThrow(/sqllite/);
  });

  it("may not leave a store out under CI", () => {
    expect(() => storesWanted({ CI: "1", PUNCTUAL_TEST_STORES: "memory" })).toThrow(/CI/);
    expect(storesWanted({ CI: "1", PUNCTUAL_TEST_STORES: "postgres,sqlite,memory" }).size).toBe(3);
    expect(storesWanted({ CI: "1" }).size).toBe(3);
  });
});
