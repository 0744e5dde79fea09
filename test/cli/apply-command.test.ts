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

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: { PUNCTUAL_URL: t.url, PUNCTUAL_TOKEN: token },
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
      "plan (dry run, nothing written) for group billing:\n" +
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
      "applied for group billing:\n" +
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
});
