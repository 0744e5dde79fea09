/**
 * The SQLite file and its -wal and -shm are readable by their owner only (docs/security.md#secrets-at-rest):
 * created 0600 whatever the umask, and an older, looser file is brought back to 0600 when opened.
 */
import { chmodSync, statSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("file-mode");
afterAll(() => {
  files.remove();
});

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

describe("the SQLite store's files", () => {
  it("are created 0600, with their -wal and -shm, under a permissive umask", async () => {
    const path = files.path();
    const before = process.umask(0o000);
    try {
      const store = await openSqliteStore({ path, newId: createIdGenerator() });
      try {
        for (const file of [path, `${path}-wal`, `${path}-shm`]) {
          expect(modeOf(file).toString(8), file).toBe("600");
        }
      } finally {
        await store.close();
      }
    } finally {
      process.umask(before);
    }
  });

  it("are brought back to 0600 when an existing file was readable by others", async () => {
    const path = files.path();
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        expect(modeOf(file).toString(8), file).toBe("600");
      }
    } finally {
      await store.close();
    }
  });
});
