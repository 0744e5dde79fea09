/**
 * The example in docs/client.md type-checks, and runs as written against a real listening server (port
 * 0, built by `buildHttpApp()` through `createServer`) with its URL and a token in the environment. It
 * runs with tsx in its own process; the only change made to the code is the import specifier:
 * `punctual/client` points at this checkout's sources.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PunctualClient } from "../../src/client.js";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

const ROOT = join(import.meta.dirname, "..", "..");
const doc = readFileSync(join(ROOT, "docs", "client.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "punctual-client-doc-"));
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

function example(): string {
  const marker = "<!-- tested-example: client -->";
  const at = doc.indexOf(marker);
  expect(at, `docs/client.md has no ${marker}`).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)\n```/.exec(doc.slice(at));
  expect(block, `no ts block after ${marker}`).not.toBeNull();
  return block?.[1] ?? "";
}

/** The example in a temporary `.mts` file, importing this checkout's `src/client.ts`. */
function written(): string {
  const file = join(dir, "client.mts");
  const source = join(ROOT, "src", "client.js");
  writeFileSync(file, example().replaceAll('from "punctual/client"', `from "${source}"`));
  return file;
}

describe("docs/client.md", () => {
  it("imports only from punctual/client", () => {
    const specifiers = [...example().matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
    expect(specifiers).toEqual(["punctual/client"]);
  });

  it("type-checks", { timeout: 60_000 }, () => {
    const program = ts.createProgram([written()], {
      strict: true,
      noEmit: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules", "@types")],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
  });

  it("runs the example as written against a listening server", { timeout: 90_000 }, async () => {
    const file = written();
    const tsx = join(ROOT, "node_modules", ".bin", "tsx");
    const token = await t.token("docs");
    const { stdout } = await promisify(execFile)(tsx, [file], {
      cwd: dir,
      timeout: 60_000,
      env: { ...process.env, PUNCTUAL_URL: t.url, PUNCTUAL_TOKEN: token },
    });
    expect(stdout).toMatch(/^created \S+, next fire \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    expect(stdout).toMatch(/^warning: In America\/New_York, on \d{4}-03-\d\d clocks jump/m);
    expect(stdout).toContain("cron 30 2 * * * in America/New_York\n");
    expect(stdout).toContain("stale edit refused: 409 The task has changed\n");
    expect(stdout).toContain("one manual run: true, replayed: true\n");
    expect(stdout).toContain("1 task(s)\n");
    expect(stdout).toContain(
      "validation_failed: schedule.cron: minute field: 61 is out of range 0-59\n",
    );
    // It cleans up after itself: the task it made is deleted.
    const left = await new PunctualClient({ baseUrl: t.url, token }).tasks.list();
    expect(left.items).toEqual([]);
  });
});
