/**
 * Time-ordered ids (UUIDv7 layout): 48 bits of milliseconds, then a counter that keeps ids minted in the
 * same millisecond in order, then randomness. Later calls always sort after earlier ones as strings.
 */
import { randomFillSync } from "node:crypto";

/** Random bytes drawn 4 KiB at a time: one `randomBytes(8)` per id was a system call per admitted run. */
const POOL_SIZE = 4096;

function randomPool(): (n: number) => Buffer {
  const pool = Buffer.alloc(POOL_SIZE);
  let offset = POOL_SIZE;
  return (n) => {
    if (offset + n > POOL_SIZE) {
      randomFillSync(pool);
      offset = 0;
    }
    const bytes = pool.subarray(offset, offset + n);
    offset += n;
    return bytes;
  };
}

export function createIdGenerator(readClock: () => number = Date.now): () => string {
  let lastMs = 0;
  let counter = 0;
  const randomBytes = randomPool();
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
