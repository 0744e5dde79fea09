/**
 * `punctual token create|list|revoke` in process (docs/security.md): a token printed once and then only
 * its hash kept, the list that never shows a secret, a revoke that an unknown id fails, and a refused
 * owner that exits 2, on a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { tokenCommand } from "../../src/cli/token-command.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "punctual-token-"));
  dirs.push(dir);
  return join(dir, "punctual.db");
}

/** Runs `punctual token <args>` with its output captured; the database comes from the environment. */
async function token(
  database: string,
  ...args: string[]
): Promise<{ out: string; err: string; thrown: unknown }> {
  const out: string[] = [];
  const err: string[] = [];
  const command = tokenCommand({
    env: { PUNCTUAL_DATABASE_URL: database },
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
  });
  command.exitOverride().configureOutput({ writeErr: (text) => err.push(text) });
  let thrown: unknown = null;
  try {
    await command.parseAsync(args, { from: "user" });
  } catch (error) {
    thrown = error;
  }
  return { out: out.join(""), err: err.join(""), thrown };
}

describe("punctual token", () => {
  it("prints a new token once, stores only its hash, and lists tokens without secrets", async () => {
    const database = tempDb();
    const made = await token(database, "create", "--owner", "alice", "--label", "ci");
    expect(made.thrown).toBeNull();
    const [secret = "", note = ""] = made.out.trimEnd().split("\n");
    expect(secret).toMatch(/^pct_/);
    expect(note).toMatch(/^\(token \S+ for owner alice: shown only once\)$/);
    const admin = await token(database, "create", "--owner", "root", "--admin", "--json");
    const adminJson = JSON.parse(admin.out) as {
      id: string;
      owner: string;
      admin: boolean;
      token: string;
    };
    expect(adminJson).toMatchObject({ owner: "root", admin: true });
    expect(adminJson.token).toMatch(/^pct_/);

    const db = new Database(database, { readonly: true });
    const stored = JSON.stringify(db.prepare("SELECT * FROM api_tokens").all());
    db.close();
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(adminJson.token);

    const listed = await token(database, "list");
    expect(listed.out).toMatch(/^ID\s+OWNER\s+ADMIN\s+LABEL\s+CREATED\s+REVOKED/);
    expect(listed.out).toMatch(/alice\s+ci\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z/);
    expect(listed.out).toMatch(/root\s+yes\s+/);
    expect(listed.out).not.toContain(secret);
    const json = JSON.parse((await token(database, "list", "--json")).out) as {
      id: string;
      owner: string;
      admin: boolean;
      label: string | null;
      revoked_at: string | null;
    }[];
    expect(json.map((t) => [t.owner, t.admin, t.label, t.revoked_at])).toEqual(
      expect.arrayContaining([
        ["alice", false, "ci", null],
        ["root", true, null, null],
      ]),
    );
    expect(JSON.stringify(json)).not.toContain(secret);
  });

  it("revokes a token by id, shows when, and fails for an id with no active token", async () => {
    const database = tempDb();
    const made = JSON.parse(
      (await token(database, "create", "--owner", "alice", "--json")).out,
    ) as { id: string };
    const revoked = await token(database, "revoke", made.id);
    expect(revoked).toMatchObject({ out: `revoked ${made.id}\n`, thrown: null });
    const [row] = JSON.parse((await token(database, "list", "--json")).out) as {
      revoked_at: string | null;
    }[];
    expect(row?.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    expect((await token(database, "list")).out).toMatch(/alice\s+\S+Z\s+\S+Z/);

    const again = await token(database, "revoke", made.id);
    expect((again.thrown as Error).message).toBe(`token revoke: no active token ${made.id}`);
    const unknown = await token(database, "revoke", "no-such-token");
    expect((unknown.thrown as Error).message).toBe("token revoke: no active token no-such-token");
  });

  it("refuses an owner it cannot store with exit code 2, writing nothing", async () => {
    const database = tempDb();
    const refused = await token(database, "create", "--owner", "not an owner");
    expect(refused.thrown).toMatchObject({ exitCode: 2, code: "punctual.invalidInput" });
    expect(refused.err).toMatch(/^punctual token: .*owner/);
    expect(refused.out).toBe("");
    expect(JSON.parse((await token(database, "list", "--json")).out)).toEqual([]);
  });
});
