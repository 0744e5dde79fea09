/**
 * The examples in docs/library.md run as written, so the page cannot rot. Each fenced block after a
 * `<!-- tested-example: NAME -->` marker is written to a temporary `.mts` file and run with tsx in its
 * own process (in an empty directory, where its SQLite file lands). The only change made to the code is
 * the import specifier: `punctual` and `punctual/testing` point at this checkout's sources.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const doc = readFileSync(join(ROOT, "docs", "library.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "punctual-doc-"));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The code of the block marked `name`. */
function example(name: string): string {
  const marker = `<!-- tested-example: ${name} -->`;
  const at = doc.indexOf(marker);
  expect(at, `docs/library.md has no ${marker}`).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)\n```/.exec(doc.slice(at));
  expect(block, `no ts block after ${marker}`).not.toBeNull();
  return block?.[1] ?? "";
}

/** Points the package's own specifiers at the sources. */
function localImports(code: string): string {
  const source = (file: string): string => pathToFileURL(join(ROOT, "src", file)).href;
  return code
    .replaceAll('from "punctual/testing"', `from "${source("testing.ts")}"`)
    .replaceAll('from "punctual"', `from "${source("index.ts")}"`)
    .replaceAll(
      'from "zod"',
      `from "${pathToFileURL(join(ROOT, "node_modules", "zod", "index.js")).href}"`,
    );
}

async function run(name: string): Promise<{ stdout: string; stderr: string }> {
  const code = example(name);
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const file = join(cwd, `${name}.mts`);
  writeFileSync(file, localImports(code));
  const tsx = join(ROOT, "node_modules", ".bin", "tsx");
  return promisify(execFile)(tsx, [file], { cwd, timeout: 60_000 });
}

describe("docs/library.md", () => {
  it("imports only from punctual, punctual/testing, zod and node: modules", () => {
    for (const name of ["library", "testing"]) {
      const specifiers = [...example(name).matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
      for (const specifier of specifiers) {
        expect(specifier).toMatch(/^(punctual(\/testing)?|zod|node:.+)$/);
      }
    }
  });

  it("runs the library example as written", { timeout: 90_000 }, async () => {
    const { stdout } = await run("library");
    expect(stdout).toContain("declared reminders:weekday");
    expect(stdout).toContain("again: unchanged reminders:weekday");
    expect(stdout).toContain("reminding team");
    expect(stdout).toMatch(/run \S+ succeeded: \{ sent: true, to: 'team' \}/);
  });

  it("runs the testing-kit example as written", { timeout: 90_000 }, async () => {
    const { stdout } = await run("testing");
    expect(stdout).toContain("replayed 6 runs");
  });
});
