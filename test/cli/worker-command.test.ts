/**
 * `punctual worker`'s configuration, in-process: where the database URL comes from and how a handlers
 * module is read. The running worker is tested as a process in test/e2e/worker.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { databaseUrlOf, loadHandlers, redactUrl } from "../../src/cli/cli-options.js";

const dir = mkdtempSync(join(tmpdir(), "punctual-worker-cli-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function module(name: string, source: string): string {
  writeFileSync(join(dir, name), source);
  return `./${name}`;
}

describe("punctual worker configuration", () => {
  it("takes the database from --database, else PUNCTUAL_DATABASE_URL, else ./punctual.db", () => {
    expect(databaseUrlOf("postgres://db/x", { PUNCTUAL_DATABASE_URL: "a.db" })).toBe(
      "postgres://db/x",
    );
    expect(databaseUrlOf(undefined, { PUNCTUAL_DATABASE_URL: "sqlite:/var/a.db" })).toBe(
      "sqlite:/var/a.db",
    );
    expect(databaseUrlOf(undefined, {})).toBe("./punctual.db");
    expect(databaseUrlOf(undefined, { PUNCTUAL_DATABASE_URL: "" })).toBe("./punctual.db");
  });

  it("never logs a database password", () => {
    expect(redactUrl("postgres://app:s3cret@db:5432/punctual")).toBe(
      "postgres://app:***@db:5432/punctual",
    );
    expect(redactUrl("./punctual.db")).toBe("./punctual.db");
  });

  it("reads handlers from a module's default export or its `handlers` export", async () => {
    const byDefault = module("default.mjs", "export default { a: () => 1, b: async () => 2 };");
    expect(Object.keys(await loadHandlers(byDefault, dir))).toEqual(["a", "b"]);
    const named = module(
      "named.mjs",
      "export const handlers = { c: () => 3 }; export default { ignored: () => 0 };",
    );
    expect(Object.keys(await loadHandlers(named, dir))).toEqual(["c"]);
  });

  it("says what is wrong with a handlers module", async () => {
    await expect(loadHandlers("./missing.mjs", dir)).rejects.toThrow(
      /cannot load \.\/missing\.mjs/,
    );
    const notMap = module("not-map.mjs", "export default 42;");
    await expect(loadHandlers(notMap, dir)).rejects.toThrow(
      /must export a \{ name: handler \} map/,
    );
    const notFunction = module("not-fn.mjs", "export default { a: 'nope' };");
    await expect(loadHandlers(notFunction, dir)).rejects.toThrow(/handler "a" is not a function/);
    const empty = module("empty.mjs", "export default {};");
    await expect(loadHandlers(empty, dir)).rejects.toThrow(/exports no handler/);
  });

  it("exits 2 with one line on stderr for a bad handlers module, flag or value", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const missing = join(dir, "missing.mjs");
      expect(await main(["node", "punctual", "worker", "--handlers", missing])).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toMatch(/^punctual worker: cannot load/);
      expect(await main(["node", "punctual", "worker"])).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toMatch(/--handlers/);
      const ok = join(dir, "ok.mjs");
      writeFileSync(ok, "export default { a: () => 1 };");
      const args = ["node", "punctual", "worker", "--handlers", ok];
      expect(await main([...args, "--retention", "one month"])).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toMatch(/^punctual worker: --retention/);
      expect(await main([...args, "--max-concurrent-runs", "0"])).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toMatch(/positive integer/);
    } finally {
      stderr.mockRestore();
    }
  });
});
