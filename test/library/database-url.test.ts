/**
 * A database URL punctual cannot use is said so (docs/operations.md#running-a-worker): a scheme it does
 * not run on is refused instead of becoming a file name, and a SQLite file in a missing folder names the
 * folder instead of a bare ENOENT.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { storeFromDatabaseUrl } from "../../src/composition-stores.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";

describe("storeFromDatabaseUrl", () => {
  it("refuses a mysql:// URL instead of taking it for a file name", () => {
    expect(() => storeFromDatabaseUrl("mysql://app@db/punctual")).toThrow(
      "database: mysql:// is not a database punctual runs on",
    );
  });

  it("names the missing folder of a SQLite file and creates nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "punctual-url-"));
    try {
      const path = join(dir, "missing", "punctual.db");
      await expect(storeFromDatabaseUrl(path).open({ newId: createIdGenerator() })).rejects.toThrow(
        `the folder of the SQLite database ${path} does not exist`,
      );
      expect(existsSync(join(dir, "missing"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
