/**
 * Which modules a CLI process loads, and in what order: a module loader hook (`--import` it through
 * NODE_OPTIONS) that writes every module the process loads to stderr, one `[loaded] URL` a line, and the
 * line that names a module of dist/ whether `npm run build` bundled it (dist/cli-bundle/) or not.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./build.js";

/** The hook's module text: write it to a file and pass `--import file://...`. */
export const LOAD_RECORDER = `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("[loaded] " + r.url + "\\\\n"); return r; }'
));
`;

/**
 * What `npm run build` bundled into each chunk of dist/cli-bundle/ (scripts/bundle-cli.ts), by chunk
 * file name; empty when there is no bundle (bin/punctual.js then loads dist/cli/ itself).
 */
export function bundleManifest(): ReadonlyMap<string, readonly string[]> {
  const path = join(ROOT, "dist", "cli-bundle", "modules.json");
  if (!existsSync(path)) return new Map();
  return new Map(
    Object.entries(JSON.parse(readFileSync(path, "utf8")) as Record<string, string[]>),
  );
}

/** What the recorder prints when `module` (a path from the root) is loaded: its chunk's, if bundled. */
export function bundleLoadLine(module: string): string {
  for (const [chunk, inputs] of bundleManifest()) {
    if (inputs.includes(module)) return `/dist/cli-bundle/${chunk}\n`;
  }
  return `/${module}\n`;
}
