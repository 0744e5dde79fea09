/** Time-ordered ids: UUIDv7 layout, ordered as strings, never repeated. */
import { describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("createIdGenerator", () => {
  it("mints UUIDv7-shaped ids that carry the clock's millisecond", () => {
    const ms = Date.UTC(2026, 10, 30, 10, 0, 0, 123);
    const id = createIdGenerator(() => ms)();
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replaceAll("-", "").slice(0, 12), 16)).toBe(ms);
  });

  it("orders ids as strings, within a millisecond and past 4,096 of them", () => {
    const next = createIdGenerator(() => 1_000);
    const ids = Array.from({ length: 10_000 }, () => next());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });

  it("keeps its random part random across many ids (its entropy is drawn in blocks)", () => {
    const next = createIdGenerator(() => 1_000);
    // The last 12 hex digits are random only: among 5,000 ids (ten blocks of entropy) none repeats.
    const tails = Array.from({ length: 5_000 }, () => next().slice(-12));
    expect(new Set(tails).size).toBe(tails.length);
  });

  it("never goes back when the clock does", () => {
    let now = 5_000;
    const next = createIdGenerator(() => now);
    const first = next();
    now = 4_000;
    const second = next();
    expect(second > first).toBe(true);
  });
});
