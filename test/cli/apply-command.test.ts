/**
 * `punctual apply FILE --group NAME` against a real server (docs/library.md#declared-schedules): a YAML
 * or JSON file of keyed definitions; `--dry-run` prints the plan and writes nothing; a second apply
 * finds everything unchanged; `--prune` pauses the group's undeclared tasks; a bad file exits 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientCommands } from "../../src/cli/client-command.js";
import { runProgram } from "../../src/cli/main.js";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

let t: TestServer;
let token: string;
let dir: string;

beforeAll(async () => {
  t = await startTestServer();
  token = await t.token("alice");
  dir = mkdtempSync(join(tmpdir(), "punctual-cli-apply-"));
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(
  args: string[],
  as = token,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: { PUNCTUAL_URL: t.url, PUNCTUAL_TOKEN: as },
    stdout: (text: string) => (stdout += text),
    stderr: (text: string) => (stderr += text),
  };
  const program = new Command("punctual").exitOverride();
  program.configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const command of clientCommands(io)) program.addCommand(command);
  const code = await runProgram(program, ["node", "punctual", ...args], io.stderr);
  return { code, stdout, stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const YAML = `
schedules:
  - key: billing:nightly
    title: Nightly invoices
    schedule: { type: cron, cron: "0 2 * * *", timezone: Europe/Berlin }
    target: { kind: handler, name: log }
  - key: billing:weekly
    title: Weekly statement
    schedule: { type: cron, cron: "0 8 * * 1", timezone: Europe/Berlin }
    target: { kind: handler, name: log }
`;

describe("punctual apply", () => {
  it("plans, applies, finds everything unchanged, then prunes what is no longer declared", async () => {
    const declared = file("billing.yaml", YAML);
    const dry = await cli(["apply", declared, "--group", "billing", "--dry-run"]);
    expect(dry.stdout).toBe(
      "plan (dry run, nothing written) for group billing, owner alice:\n" +
        "  create    billing:nightly\n" +
        "  create    billing:weekly\n",
    );
    const listed = await cli(["tasks", "list", "--group", "billing", "--json"]);
    expect((JSON.parse(listed.stdout) as { items: unknown[] }).items).toEqual([]);

    const applied = await cli(["apply", declared, "--group", "billing"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("  create    billing:nightly\n");
    const again = await cli(["apply", declared, "--group", "billing", "--json"]);
    const plan = JSON.parse(again.stdout) as { steps: { action: string }[] };
    expect(plan.steps.map((s) => s.action)).toEqual(["unchanged", "unchanged"]);

    const fewer = file(
      "fewer.json",
      JSON.stringify([
        {
          key: "billing:nightly",
          title: "Nightly invoices",
          schedule: { type: "cron", cron: "0 3 * * *", timezone: "Europe/Berlin" },
          target: { kind: "handler", name: "log" },
        },
      ]),
    );
    const pruned = await cli(["apply", fewer, "--group", "billing", "--prune", "pause"]);
    expect(pruned.stdout).toBe(
      "applied for group billing, owner alice:\n" +
        "  update    billing:nightly (schedule)\n" +
        "  prune     billing:weekly (paused)\n",
    );
    const weekly = await cli(["tasks", "list", "--key", "billing:weekly", "--json"]);
    expect((JSON.parse(weekly.stdout) as { items: unknown[] }).items[0]).toMatchObject({
      status: "paused",
      group: "billing",
    });
  });

  it("exits 2 for a file without definitions, a bad --prune, and an invalid definition", async () => {
    expect((await cli(["apply", file("empty.yaml", "title: x\n"), "--group", "g"])).code).toBe(2);
    expect((await cli(["apply", file("ok.yaml", YAML), "--group", "g", "--prune", "x"])).code).toBe(
      2,
    );
    const bad = file(
      "bad.yaml",
      "- key: a\n  title: bad\n  schedule: { type: cron, cron: '61 * * * *' }\n  target: { kind: handler, name: log }\n",
    );
    const refused = await cli(["apply", bad, "--group", "g"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("schedule.cron");
  });

  it("prunes only the owner its upserts go to, and refuses an owner the token does not write as", async () => {
    // Issue 35: an admin token sees every owner's tasks of the group, but its upserts go to its own.
    const admin = await t.token("ops", true);
    const bob = await t.token("bob");
    const one = (key: string, title: string) =>
      JSON.stringify([
        {
          key,
          title,
          schedule: { type: "cron", cron: "0 4 * * *", timezone: "UTC" },
          target: { kind: "handler", name: "log" },
        },
      ]);
    const bobs = await cli(
      ["apply", file("bob.json", one("shared:bob", "Bob's")), "--group", "shared"],
      bob,
    );
    expect(bobs.code, bobs.stderr).toBe(0);

    const ops = file("ops.json", one("shared:ops", "Ops'"));
    const dry = await cli(
      ["apply", ops, "--group", "shared", "--prune", "delete", "--dry-run"],
      admin,
    );
    expect(dry.stdout).toBe(
      "plan (dry run, nothing written) for group shared, owner ops:\n" + "  create    shared:ops\n",
    );
    const applied = await cli(["apply", ops, "--group", "shared", "--prune", "delete"], admin);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).not.toContain("shared:bob");
    const left = await cli(["tasks", "list", "--key", "shared:bob", "--json"], bob);
    expect((JSON.parse(left.stdout) as { items: unknown[] }).items[0]).toMatchObject({
      status: "enabled",
    });

    const across = await cli(
      ["apply", ops, "--group", "shared", "--owner", "bob", "--prune", "delete"],
      admin,
    );
    expect(across.code).toBe(2);
    expect(across.stderr).toContain('the upserts go to owner "ops"');

    // Nothing declared: whose tasks to prune must be named; named, only that owner's go.
    const none = file("none.json", "[]");
    const unnamed = await cli(["apply", none, "--group", "shared", "--prune", "delete"], admin);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain("--owner");
    const named = await cli(
      ["apply", none, "--group", "shared", "--prune", "delete", "--owner", "ops"],
      admin,
    );
    expect(named.stdout).toBe(
      "applied for group shared, owner ops:\n" + "  prune     shared:ops (deleted)\n",
    );
    const still = await cli(["tasks", "list", "--key", "shared:bob", "--json"], bob);
    expect((JSON.parse(still.stdout) as { items: unknown[] }).items).toHaveLength(1);
  });
});
