/**
 * Summarises a V8 `.cpuprofile` (from `npm run bench -- --profile`): self time by layer (the garbage
 * collector, the database driver, each of punctual's layers...), by function and by source file, and
 * inclusive time of punctual's own functions, so a profile can be read in a terminal
 * or pasted into a note. Usage: `tsx bench/profile-summary.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function shortUrl(url: string): string {
  const at = url.indexOf("/work/");
  const path = at >= 0 ? url.slice(at) : url;
  return path.replace(/^.*\/node_modules\//, "~/").replace(/^\/work\/[^/]+\//, "");
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || "(anonymous)"} ${url === "" ? "" : `${shortUrl(url)}:${lineNumber + 1}`}`.trim();
}

/** Where a frame's self time belongs, by the layer of its code (docs/benchmarks.md#profiling). */
const LAYERS: readonly (readonly [string, (url: string, fn: string) => boolean])[] = [
  ["garbage collector", (_, fn) => fn === "(garbage collector)"],
  [
    "module loading",
    (url, fn) =>
      /node:internal\/(modules|bootstrap|deps\/cjs-module-lexer|source_map)|tsx\/dist/.test(url) ||
      fn === "compileSourceTextModule",
  ],
  [
    "pg driver (pg, pg-protocol, pg-pool)",
    (url) => /node_modules\/(pg|pg-protocol|pg-pool)\//.test(url),
  ],
  ["punctual: PostgreSQL adapter", (url) => url.includes("src/adapters/storage/postgres/")],
  // better-sqlite3 runs SQLite synchronously inside the adapter's frames: its work shows there.
  [
    "punctual: SQLite adapter, with SQLite's own work",
    (url) =>
      url.includes("src/adapters/storage/sqlite/") || url.includes("node_modules/better-sqlite3/"),
  ],
  ["punctual: memory store", (url) => url.includes("src/adapters/storage/memory/")],
  ["punctual: storage, shared", (url) => url.includes("src/adapters/storage/shared/")],
  ["punctual: launchers", (url) => url.includes("src/adapters/launchers/")],
  ["punctual: domain", (url) => url.includes("src/domain/")],
  ["punctual: application", (url) => url.includes("src/application/")],
  ["punctual: runtime", (url) => url.includes("src/runtime/")],
  ["punctual: other", (url) => url.includes("/src/")],
  ["bench harness", (url) => url.includes("/bench/")],
  ["other packages", (url) => url.includes("node_modules/")],
  ["native (socket writes, buffers, microtasks)", (url) => url === ""],
  ["Node internals", () => true],
];

function layerOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  return LAYERS.find(([, test]) => test(url, functionName))?.[0] ?? "Node internals";
}

function main(): void {
  const [file, topText] = process.argv.slice(2);
  if (file === undefined)
    throw new Error("usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  const top = Number(topText ?? 25);
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n] as const));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
  );
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const selfByName = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const selfByLayer = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    const node = byId.get(id);
    if (node === undefined || node.callFrame.functionName === "(idle)") continue;
    selfByName.set(frameName(node), (selfByName.get(frameName(node)) ?? 0) + time);
    const fileKey =
      node.callFrame.url === "" ? `(${node.callFrame.functionName})` : shortUrl(node.callFrame.url);
    selfByFile.set(fileKey, (selfByFile.get(fileKey) ?? 0) + time);
    const layer = layerOf(node);
    selfByLayer.set(layer, (selfByLayer.get(layer) ?? 0) + time);
    // Inclusive: once per distinct frame on the stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at);
      if (frame === undefined) break;
      const name = frameName(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    }
  }
  const pct = (t: number): string => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
  const show = (
    title: string,
    map: Map<string, number>,
    filter: (k: string) => boolean = () => true,
  ): void => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, time] of [...map.entries()]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)) {
      process.stdout.write(`${pct(time)} ${(time / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
    }
  };
  process.stdout.write(
    `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (percentages of busy time)\n`,
  );
  show("self time by layer", selfByLayer);
  show("self time by function", selfByName);
  show("self time by file", selfByFile);
  show("inclusive time, punctual's code (src/)", inclusive, (k) => k.includes(" src/"));
}

main();
