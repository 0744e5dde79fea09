/**
 * Time-ordered ids (UUIDv7 layout): 48 bits of milliseconds, then a counter that keeps ids minted in the
 * same millisecond in order, then randomness. Later calls always sort after earlier ones as strings.
 */
import { randomBytes } from "node:crypto";

export function createIdGenerator(readClock: () => number = Date.now): () => string {
  let lastMs = 0;
  let counter = 0;
  return () => {
    let ms = readClock();
    if (ms <= lastMs) {
      ms = lastMs;
      counter++;
      if (counter > 0xfff) {
        // 4,096 ids in one millisecond: borrow the next millisecond to stay ordered.
        lastMs = ms = lastMs + 1;
        counter = 0;
      }
    } else {
      lastMs = ms;
      counter = 0;
    }
    const random = randomBytes(8);
    const hex = ms.toString(16).padStart(12, "0");
    const counterHex = (0x7000 | counter).toString(16);
    const variant = (((random[0] ?? 0) & 0x3f) | 0x80).toString(16).padStart(2, "0");
    const tail = random.subarray(1, 8).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${counterHex}-${variant}${tail.slice(0, 2)}-${tail.slice(2, 14)}`;
  };
}
