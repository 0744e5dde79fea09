/**
 * Links into the docs must land: every `docs/<page>.md#<section>` a source comment or a page cites, and
 * every `<page>.md#<section>` link between pages, names a heading that exists (GitHub's anchor for it),
 * and every source file docs/architecture.md names exists. Headings are linked from code, so renaming
 * one without its links fails here.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listTs, ROOT } from "../architecture/source-scan.js";

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, "docs", page), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchorOf(m[1] ?? "")));
}

const pages = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"));

/** Every `[page, section, where]` cited. */
function citations(): [string, string, string][] {
  const found: [string, string, string][] = [];
  const sources = [...listTs(join(ROOT, "src")), join(ROOT, "README.md")];
  for (const file of sources) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/docs\/([a-z-]+\.md)#([a-z0-9_-]+)/g)) {
      found.push([m[1] ?? "", m[2] ?? "", file.slice(ROOT.length + 1)]);
    }
  }
  for (const page of pages) {
    const text = readFileSync(join(ROOT, "docs", page), "utf8");
    for (const m of text.matchAll(/\]\(([a-z-]+\.md)?#([a-z0-9_-]+)\)/g)) {
      found.push([m[1] ?? page, m[2] ?? "", `docs/${page}`]);
    }
  }
  return found;
}

describe("links into the docs", () => {
  const cited = citations();

  it("are there to check", () => {
    expect(cited.length).toBeGreaterThan(10);
  });

  it.each(cited)("%s#%s (from %s) names a heading", (page, section) => {
    expect(pages).toContain(page);
    expect([...anchorsOf(page)]).toContain(section);
  });
});

describe("docs/architecture.md", () => {
  const text = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const named = [...new Set([...text.matchAll(/`([a-z0-9/-]+\.ts)`/g)].map((m) => m[1] ?? ""))];

  it.each(named)("names %s, which exists", (file) => {
    const candidates = [join(ROOT, "src", file), join(ROOT, file)];
    const bare = !file.includes("/");
    const found =
      candidates.some((path) => existsSync(path)) ||
      (bare && listTs(join(ROOT, "src")).some((path) => path.endsWith(`/${file}`)));
    expect(found, file).toBe(true);
  });
});
