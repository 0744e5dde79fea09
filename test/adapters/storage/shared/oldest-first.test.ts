/**
 * OldestFirst (src/adapters/storage/shared/oldest-first.ts) forgets the entry a fresh `map.keys().next()`
 * would name, whatever was deleted, moved to the end or inserted in between, and after the map emptied.
 */
import { describe, expect, it } from "vitest";
import { OldestFirst } from "../../../../src/adapters/storage/shared/oldest-first.js";

describe("forgetting a map's oldest entries", () => {
  it("forgets what a fresh iterator names first, through deletions, moves and an emptied map", () => {
    const kept = new Map<number, number>();
    const fresh = new Map<number, number>();
    const oldest = new OldestFirst(kept);
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let step = 0; step < 20_000; step++) {
      const key = random(500);
      switch (random(5)) {
        case 0:
          kept.delete(key);
          fresh.delete(key);
          break;
        case 1: {
          // Used again: moved to the end, as the definition cache does.
          const value = kept.get(key);
          if (value !== undefined) {
            kept.delete(key);
            kept.set(key, value);
            fresh.delete(key);
            fresh.set(key, value);
          }
          break;
        }
        case 2:
          if (fresh.size > 0) {
            const first = fresh.keys().next().value as number;
            fresh.delete(first);
            oldest.forgetOldest();
          }
          break;
        case 3:
          if (step % 1000 === 3) {
            // Emptied by evictions alone: the kept iterator is then spent.
            while (fresh.size > 0) {
              fresh.delete(fresh.keys().next().value as number);
              oldest.forgetOldest();
            }
            oldest.forgetOldest();
          }
          break;
        default:
          kept.set(key, step);
          fresh.set(key, step);
      }
      expect([...kept.keys()]).toEqual([...fresh.keys()]);
    }
  });
});
