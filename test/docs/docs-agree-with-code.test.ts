/**
 * The lists users read must match the lists the code produces (as Fastify's error docs test does).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/domain/errors.js";
import { EXPLAIN_VERDICTS } from "../../src/domain/explain.js";
import { RUN_REASONS, RUN_STATUSES } from "../../src/domain/run.js";
import { TASK_STATUSES } from "../../src/domain/task.js";
import { SKIP_REASONS, MISS_REASONS } from "../../src/domain/admission.js";

function tableKeys(doc: string, heading: string): string[] {
  const start = doc.indexOf(heading);
  expect(start, `heading ${heading}`).toBeGreaterThanOrEqual(0);
  const rest = doc.slice(start + heading.length);
  const end = rest.search(/\n#+ /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|/gm)].map((m) => m[1] ?? "");
}

const semantics = readFileSync(new URL("../../docs/semantics.md", import.meta.url), "utf8");
const errors = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");

describe("docs/semantics.md", () => {
  it("explains every run reason the code can produce, and no other", () => {
    expect(tableKeys(semantics, "## Reasons").sort()).toEqual([...RUN_REASONS].sort());
  });

  it("explains every run status", () => {
    expect(tableKeys(semantics, "## Run statuses").sort()).toEqual([...RUN_STATUSES].sort());
  });

  it("explains every task status", () => {
    expect(tableKeys(semantics, "## Task statuses").sort()).toEqual([...TASK_STATUSES].sort());
  });

  it("explains every explain verdict, and no other", () => {
    expect(tableKeys(semantics, "## Explain").sort()).toEqual([...EXPLAIN_VERDICTS].sort());
  });

  it("knows every reason admission records", () => {
    for (const reason of [...SKIP_REASONS, ...MISS_REASONS]) {
      expect(RUN_REASONS).toContain(reason);
    }
  });
});

describe("docs/errors.md", () => {
  it("lists every error code, and no other", () => {
    expect(tableKeys(errors, "# Errors").sort()).toEqual([...ERROR_CODES].sort());
  });

  it("lists every limit a limit_exceeded can name, and no other", () => {
    const root = new URL("../../src/", import.meta.url);
    const named = new Set<string>();
    for (const entry of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      if (!entry.endsWith(".ts")) continue;
      const text = readFileSync(new URL(entry, root), "utf8");
      for (const m of text.matchAll(/LimitExceededError\(\s*"([a-z_]+)"/g)) named.add(m[1] ?? "");
      for (const m of text.matchAll(/limit: "([a-z_]+)"/g)) named.add(m[1] ?? "");
    }
    expect(tableKeys(errors, "## Limits").sort()).toEqual([...named].sort());
  });
});
