/**
 * docs/architecture.md: the domain is pure. This test fails when a file under src/domain imports outside the domain
 * (packages only from the allow-list), imports a `node:` module, reads the clock, sets a timer, draws
 * randomness, or contains async code.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { codeOnly, importsOf, listTs, ROOT } from "./source-scan.js";

const domainDir = join(ROOT, "src/domain");

/** Packages the domain may import: pure libraries only. */
const ALLOWED_PACKAGES: readonly string[] = [];

const FORBIDDEN: readonly { pattern: RegExp; reason: string }[] = [
  { pattern: /\bDate\.now\s*\(/, reason: "reads the clock (Date.now)" },
  { pattern: /\bnew\s+Date\s*\(\s*\)/, reason: "reads the clock (new Date())" },
  { pattern: /\bDate\s*\(\s*\)/, reason: "reads the clock (Date())" },
  { pattern: /\bperformance\s*\.\s*now\b/, reason: "reads the clock (performance.now)" },
  { pattern: /\bprocess\s*\.\s*hrtime\b/, reason: "reads the clock (process.hrtime)" },
  { pattern: /\bset(Timeout|Interval|Immediate)\s*\(/, reason: "sets a timer" },
  { pattern: /\bqueueMicrotask\s*\(/, reason: "schedules work for later" },
  { pattern: /\bMath\.random\s*\(/, reason: "draws randomness" },
  { pattern: /\basync\b/, reason: "contains async code" },
  { pattern: /\bawait\b/, reason: "contains await" },
  { pattern: /\.then\s*\(/, reason: "chains a promise" },
  { pattern: /\bprocess\s*\./, reason: "reads the process" },
];

export function violations(file: string, source: string): string[] {
  const found: string[] = [];
  for (const spec of importsOf(source)) {
    if (spec.startsWith("node:")) {
      found.push(`imports the Node built-in ${spec}`);
    } else if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      if (relative(domainDir, target).startsWith(".."))
        found.push(`imports ${spec}, outside src/domain`);
    } else if (!ALLOWED_PACKAGES.includes(spec)) {
      found.push(`imports the package ${spec}, which is not on the domain allow-list`);
    }
  }
  const code = codeOnly(source);
  for (const { pattern, reason } of FORBIDDEN) {
    if (pattern.test(code)) found.push(reason);
  }
  return found;
}

describe("the domain", () => {
  const files = listTs(domainDir).filter((f) => !f.endsWith("tsconfig.json"));

  it("has source files to check", () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))("%s is pure", (_name, file) => {
    expect(violations(file, readFileSync(file, "utf8"))).toEqual([]);
  });
});

describe("the purity scan", () => {
  const probe = join(domainDir, "probe.ts");

  it.each([
    ["const t = Date.now();", "reads the clock (Date.now)"],
    ["const t = new Date();", "reads the clock (new Date())"],
    ["const t = performance.now();", "reads the clock (performance.now)"],
    ["setTimeout(() => 1, 5);", "sets a timer"],
    ["export async function f() {}", "contains async code"],
    ["const x = await y;", "contains await"],
    ['import { readFileSync } from "node:fs";', "imports the Node built-in node:fs"],
    ['import { x } from "../runtime/clock.js";', "imports ../runtime/clock.js, outside src/domain"],
    ['import pg from "pg";', "imports the package pg, which is not on the domain allow-list"],
    ["const r = Math.random();", "draws randomness"],
  ])("flags %s", (source, reason) => {
    expect(violations(probe, source)).toContain(reason);
  });

  it("accepts dates built from given instants and prose that mentions the clock", () => {
    const source = '// never call Date.now() here\nconst d = new Date(at);\nconst s = "await";';
    expect(violations(probe, source)).toEqual([]);
  });
});
