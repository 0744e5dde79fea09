/**
 * Reading source files for the architecture tests: every `.ts` file under a folder, the module
 * specifiers a file imports (static, dynamic and re-exports), and its code with comments and string
 * contents blanked, so that prose about a rule never trips it.
 */
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listTs(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Strips comments and string contents so that prose about `Date.now()` does not trip the scan. */
export function codeOnly(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:])\/\/.*$/gm, "$1")
    .replace(/`(?:\\.|[^`\\])*`/g, "``")
    .replace(/"(?:\\.|[^"\\\n])*"/g, '""')
    .replace(/'(?:\\.|[^'\\\n])*'/g, "''");
}

/** The module specifiers `source` imports or re-exports. */
export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const re =
    /(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s*["']([^"']+)["']/g;
  for (const match of source.matchAll(re)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (spec !== undefined) specifiers.push(spec);
  }
  return specifiers;
}
