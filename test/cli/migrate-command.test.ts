/**
 * `punctual migrate` (docs/operations.md, issue 4): applies the migrations of a database and refuses one whose
 * schema is newer than the code.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { runMigrate } from "../../src/cli/migrate-command.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "punctual-migrate-"));
  dirs.push(dir);
  return join(dir, "punctual.db");
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { env: {}, stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) },
  };
}

describe("punctual migrate", () => {
  it("applies the migrations of a new SQLite file and says the schema is current", async () => {
    const path = tempDb();
    const captured = io();
    await runMigrate({ database: path, json: true }, captured.io);
    const status = JSON.parse(captured.out.join("")) as { current: boolean; applied: number[] };
    expect(status.current).toBe(true);
    expect(status.applied).toContain(1);
    // Running it again changes nothing.
    await runMigrate({ database: path }, captured.io);
    expect(captured.out.at(-1)).toContain("schema current");
  });

  it("refuses a database migrated by a newer punctual, with exit code 1", async () => {
    const path = tempDb();
    await runMigrate({ database: path }, io().io);
    const db = new Database(path);
    db.prepare(
      "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (999, 'future', 'x', 0)",
    ).run();
    db.close();
    const captured = io();
    await expect(runMigrate({ database: path }, captured.io)).rejects.toMatchObject({
      exitCode: 1,
    });
    expect(captured.err.join("")).toMatch(/999|newer/);
    expect(await main(["node", "punctual", "migrate", "--database", path])).toBe(1);
  });

  it("stores the fleet's global budget from --max-concurrent-runs or its variable, and refuses a bad one", async () => {
    const path = tempDb();
    const first = io();
    await runMigrate({ database: path, json: true, maxConcurrentRuns: "12" }, first.io);
    expect(JSON.parse(first.out.join(""))).toMatchObject({
      current: true,
      max_concurrent_runs: 12,
      previous_max_concurrent_runs: null,
    });
    const byEnv = io();
    await runMigrate(
      { database: path },
      { ...byEnv.io, env: { PUNCTUAL_MAX_CONCURRENT_RUNS: "20" } },
    );
    expect(byEnv.out.join("")).toContain("global budget (max_concurrent_runs): 20 (was 12)");
    // Without either, the stored budget is left alone and not mentioned.
    const plain = io();
    await runMigrate({ database: path }, plain.io);
    expect(plain.out.join("")).not.toContain("global budget");
    const bad = io();
    await expect(
      runMigrate({ database: path, maxConcurrentRuns: "0" }, bad.io),
    ).rejects.toMatchObject({ exitCode: 2 });
    expect(bad.err.join("")).toContain("--max-concurrent-runs must be a positive integer");
    const db = new Database(path);
    expect(db.prepare("SELECT value FROM fleet_settings").get()).toEqual({ value: 20 });
    db.close();
  });
});
