/**
 * `npm run build`'s last step (docs/benchmarks.md#start-cost): bundles the CLI program that `tsc` has
 * emitted in dist/ (dist/cli/main.js and everything it imports, dependencies included) into
 * dist/cli-bundle/, which `bin/punctual.js` runs. One module per chunk instead of some 400 files to
 * resolve, read and link is most of what a replica's start costs in CPU. Every dynamic import stays a
 * chunk of its own, loaded only by the command that needs it: a worker never parses Fastify, the
 * dashboard or the OpenAPI document, and a SQLite worker never parses `pg`. The library's entry points
 * (dist/index.js, ...) are not bundled: they are what a program importing punctual loads.
 */
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Plugin } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");
/** Two levels under the package's root, as dist/cli/ is: paths relative to the root stay right. */
const OUT = join(DIST, "cli-bundle");

/**
 * Packages loaded from node_modules as they are: native addons (better-sqlite3, pg's optional
 * pg-native) and pino-pretty, which is loaded through `require` on a terminal only.
 */
const EXTERNAL = ["better-sqlite3", "pg-native", "pino-pretty"];

/**
 * A module of dist/ that reads `import.meta.url` (the dashboard's browser/ folder next to it, the
 * package.json two levels up, `createRequire`) keeps its own location: the bundle's chunks live in
 * dist/cli-bundle/, so the URL is rebuilt from the chunk's one and the path between the two folders.
 */
const ownLocation: Plugin = {
  name: "own-import-meta-url",
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const path = relative(OUT, args.path).split("\\").join("/");
      return {
        contents: text.replaceAll(
          "import.meta.url",
          `new URL(${JSON.stringify(path)}, import.meta.url).href`,
        ),
        loader: "js",
        resolveDir: dirname(args.path),
      };
    });
  },
};

/**
 * bin/punctual.js holds the signals that arrive during the start in dist/cli/early-signals.js, before
 * it loads the bundle: the bundle takes them from that same module, not from a copy of its own.
 */
const sharedSignals: Plugin = {
  name: "shared-early-signals",
  setup(bundle) {
    bundle.onResolve({ filter: /early-signals\.js$/ }, (args) => {
      const path = join(args.resolveDir, args.path);
      if (path !== join(DIST, "cli", "early-signals.js")) return undefined;
      return { path: "../cli/early-signals.js", external: true };
    });
  },
};

/**
 * Fastify builds its schema compilers (ajv, fast-json-stringify and their formats: half of what a
 * server would parse) when an app is created, but calls them only for a route that declares a Fastify
 * schema, which punctual's routes do not (they parse with their own zod schemas). In the bundle each
 * selector is a stand-in that loads the real one, from Fastify's own dependencies, on its first call.
 */
const LAZY_COMPILERS = /^@fastify\/(ajv-compiler|fast-json-stringify-compiler)$/;
const lazyCompilers: Plugin = {
  name: "lazy-fastify-compilers",
  setup(bundle) {
    bundle.onResolve({ filter: LAZY_COMPILERS }, (args) => ({
      path: args.path,
      namespace: "lazy-compiler",
    }));
    bundle.onLoad({ filter: /.*/, namespace: "lazy-compiler" }, (args) => ({
      loader: "js",
      contents: `
const { createRequire } = require("node:module");
let real;
const load = () =>
  (real ??= createRequire(require.resolve("fastify/package.json"))(${JSON.stringify(args.path)}));
module.exports = (...selectorArgs) => {
  let built;
  return (...args) => (built ??= load()(...selectorArgs))(...args);
};
`,
    }));
  },
};

rmSync(OUT, { recursive: true, force: true });
const { metafile } = await build({
  absWorkingDir: ROOT,
  metafile: true,
  entryPoints: { main: join(DIST, "cli", "main.js") },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  // CommonJS dependencies call `require` (node: modules, JSON): ESM has none, so each chunk makes one.
  banner: {
    js: 'import { createRequire as __punctualRequire } from "node:module"; const require = __punctualRequire(import.meta.url);',
  },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
  plugins: [sharedSignals, ownLocation, lazyCompilers],
});

/**
 * Which modules each chunk holds (paths from the package's root), so that a test can tell what a
 * command loaded from the chunks it loaded (test/e2e/worker-startup.test.ts).
 */
const modules = Object.fromEntries(
  Object.entries(metafile.outputs).map(([chunk, output]) => [
    relative(OUT, join(ROOT, chunk)),
    Object.keys(output.inputs),
  ]),
);
writeFileSync(join(OUT, "modules.json"), `${JSON.stringify(modules, null, 1)}\n`);
