/**
 * The layer rules of docs/architecture.md#layers, beyond the domain's purity: the application imports
 * only the domain; the runtime only the domain and the application; nothing imports the CLI; a store
 * imports no other store (only their shared helpers); the composition root is imported only by the
 * package entry points and the CLI; stores never import the task commands; the composition root wraps
 * nothing in a `Proxy`. Each rule is also shown to catch a file that breaks it.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { codeOnly, importsOf, listTs, ROOT } from "./source-scan.js";

const SRC = join(ROOT, "src");

/** A path under src/, with forward slashes: `application/tasks/task-service.ts`. */
function underSrc(path: string): string {
  return relative(SRC, path).split(sep).join("/");
}

/** The composition root: `src/composition.ts` and its `src/composition-*.ts` parts. */
function isCompositionRoot(path: string): boolean {
  return /^composition(-[a-z-]+)?\.ts$/.test(path);
}

/** Who may import the composition root: the package entry points, the CLI, and the root itself. */
function mayImportCompositionRoot(path: string): boolean {
  return (
    path === "index.ts" ||
    path === "testing.ts" ||
    path.startsWith("cli/") ||
    isCompositionRoot(path)
  );
}

/** Whether `path` (under src/) lies in one of `folders`. */
function inFolders(path: string, folders: readonly string[]): boolean {
  return folders.some((folder) => path.startsWith(`${folder}/`));
}

/** The store folder a path under src/ belongs to (`memory`, `sqlite`, `postgres`, `shared`), or null. */
function storeOf(path: string): string | null {
  return /^adapters\/storage\/([a-z]+)\//.exec(path)?.[1] ?? null;
}

/** Modules that decide owner commands: a store writes what it is handed and never imports them. */
const TASK_COMMAND_MODULES: readonly string[] = [
  "domain/task-commands.ts",
  "domain/task-fields.ts",
];

interface Rule {
  readonly name: string;
  /** Why `file` may not import `target` (both under src/), or null when it may. */
  readonly importing?: (file: string, target: string) => string | null;
  /** Why `file`'s code breaks the rule, or null. */
  readonly code?: (file: string, code: string) => string | null;
}

const RULES: readonly Rule[] = [
  {
    name: "the application imports only the domain",
    importing: (file, target) =>
      file.startsWith("application/") && !inFolders(target, ["domain", "application"])
        ? `the application imports ${target}`
        : null,
  },
  {
    name: "the runtime imports only the domain and the application",
    importing: (file, target) =>
      file.startsWith("runtime/") && !inFolders(target, ["domain", "application", "runtime"])
        ? `the runtime imports ${target}`
        : null,
  },
  {
    name: "nothing imports the CLI",
    importing: (file, target) =>
      target.startsWith("cli/") && !file.startsWith("cli/")
        ? `${file} imports the CLI (${target})`
        : null,
  },
  {
    name: "a store imports no other store",
    importing: (file, target) => {
      const own = storeOf(file);
      const other = storeOf(target);
      return own !== null && other !== null && other !== own && other !== "shared"
        ? `a ${own} store imports ${target}`
        : null;
    },
  },
  {
    name: "only the entry points and the CLI import the composition root",
    importing: (file, target) =>
      isCompositionRoot(target) && !mayImportCompositionRoot(file)
        ? `${file} imports the composition root (${target})`
        : null,
  },
  {
    name: "stores do not import the task commands",
    importing: (file, target) =>
      file.startsWith("adapters/storage/") && TASK_COMMAND_MODULES.includes(target)
        ? `a store imports ${target}`
        : null,
  },
  {
    name: "the composition root uses no Proxy",
    code: (file, code) =>
      isCompositionRoot(file) && /\bProxy\b/.test(code) ? `${file} uses a Proxy` : null,
  },
];

/** What `source`, the file at `path` (absolute), breaks. */
export function layerViolations(path: string, source: string): string[] {
  const file = underSrc(path);
  const found: string[] = [];
  for (const spec of importsOf(source)) {
    if (!spec.startsWith(".")) continue;
    const target = underSrc(resolve(dirname(path), spec)).replace(/\.js$/, ".ts");
    for (const rule of RULES) {
      const broken = rule.importing?.(file, target) ?? null;
      if (broken !== null) found.push(broken);
    }
  }
  const code = codeOnly(source);
  for (const rule of RULES) {
    const broken = rule.code?.(file, code) ?? null;
    if (broken !== null) found.push(broken);
  }
  return found;
}

describe("the layers", () => {
  const files = listTs(SRC);

  it("have source files to check", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it.each(files.map((f) => [underSrc(f), f]))("%s keeps to them", (_name, file) => {
    expect(layerViolations(file, readFileSync(file, "utf8"))).toEqual([]);
  });
});

describe("the layer scan", () => {
  const at = (path: string): string => join(SRC, path);

  it.each([
    [
      "application/probe.ts",
      'import { Coordinator } from "../runtime/coordinator.js";',
      "the application imports runtime/coordinator.ts",
    ],
    [
      "application/probe.ts",
      'import type { SqliteStore } from "../adapters/storage/sqlite/sqlite-store.js";',
      "the application imports adapters/storage/sqlite/sqlite-store.ts",
    ],
    [
      "runtime/probe.ts",
      'import { SchedulerMetrics } from "../adapters/metrics/scheduler-metrics.js";',
      "the runtime imports adapters/metrics/scheduler-metrics.ts",
    ],
    [
      "adapters/http/probe.ts",
      'import { createServer } from "../../composition.js";',
      "adapters/http/probe.ts imports the composition root (composition.ts)",
    ],
    [
      "application/probe.ts",
      'export { buildRuntime } from "../composition-runtime.js";',
      "application/probe.ts imports the composition root (composition-runtime.ts)",
    ],
    [
      "adapters/storage/memory/probe.ts",
      'import { pauseTask } from "../../../domain/task-commands.js";',
      "a store imports domain/task-commands.ts",
    ],
    [
      "application/tasks/probe.ts",
      'import { Hono } from "../../adapters/http/http-app.js";',
      "the application imports adapters/http/http-app.ts",
    ],
    [
      "runtime/probe.ts",
      'import { main } from "../cli/main.js";',
      "the runtime imports cli/main.ts",
    ],
    [
      "adapters/http/probe.ts",
      'import { main } from "../../cli/main.js";',
      "adapters/http/probe.ts imports the CLI (cli/main.ts)",
    ],
    [
      "adapters/storage/sqlite/probe.ts",
      'import { PostgresStore } from "../postgres/postgres-store.js";',
      "a sqlite store imports adapters/storage/postgres/postgres-store.ts",
    ],
    [
      "composition.ts",
      "const store = new Proxy(base, { get: () => undefined });",
      "composition.ts uses a Proxy",
    ],
  ])("flags %s: %s", (path, source, reason) => {
    expect(layerViolations(at(path), source)).toContain(reason);
  });

  it("lets the entry points and the CLI import the composition root, and prose mention a Proxy", () => {
    const source = 'import { createScheduler } from "./composition.js";';
    expect(layerViolations(at("index.ts"), source)).toEqual([]);
    expect(layerViolations(at("testing.ts"), source)).toEqual([]);
    const cli = 'import { createServer } from "../composition.js";';
    expect(layerViolations(at("cli/probe.ts"), cli)).toEqual([]);
    expect(layerViolations(at("composition.ts"), "// never a Proxy here")).toEqual([]);
  });
});
