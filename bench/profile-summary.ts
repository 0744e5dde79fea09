/**
 * Summarises a V8 `.cpuprofile` (from `npm run bench -- --profile`): self time by layer (the garbage
 * collector, the database driver, each of punctual's layers...), by function and by source file, and
 * inclusive time of punctual's own functions, so a profile can be read in a terminal
 * or pasted into a note. Usage: `tsx bench/profile-summary.ts <file.cpuprofile> [top] [--window=fn]
 * [--fires=N]`: with `--window`, only the samples from the first to the last whose stack holds a frame
 * named `fn` count (`--window=#claimAndLaunch`: a burst's claims, without the replica's start and the tasks'
 * creation); with `--fires`, the busy time is also given per fire (N: the fires this replica launched,
 * the bench's `perWorker`).
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
  return path.replace(/^.*\/node_modules\//, "~/").replace(/^\/work\/(wt\/)?[^/]+\//, "");
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

/** The indexes of the first and last samples whose stack holds a frame named `fn`. */
function windowOf(
  profile: Profile,
  parent: ReadonlyMap<number, number>,
  byId: ReadonlyMap<number, ProfileNode>,
  fn: string,
): readonly [number, number] {
  const holds = new Map<number, boolean>();
  const inWindow = (id: number): boolean => {
    const known = holds.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const found =
      node !== undefined &&
      (node.callFrame.functionName === fn || (up !== undefined && inWindow(up)));
    holds.set(id, found);
    return found;
  };
  let first = -1;
  let last = -1;
  profile.samples.forEach((id, i) => {
    if (!inWindow(id)) return;
    if (first < 0) first = i;
    last = i;
  });
  if (first < 0) throw new Error(`no sample has a frame named ${fn}`);
  return [first, last];
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined =>
    args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const [file, topText] = args.filter((a) => !a.startsWith("--"));
  if (file === undefined) {
    throw new Error(
      "usage: tsx bench/profile-summary.ts <file.cpuprofile> [top] [--window=fn] [--fires=N]",
    );
  }
  const top = Number(topText ?? 25);
  const windowFn = option("window");
  const firesText = option("fires");
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n] as const));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const [from, to] =
    windowFn === undefined
      ? [0, profile.samples.length - 1]
      : windowOf(profile, parent, byId, windowFn);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    if (i < from || i > to) return;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
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
  if (windowFn !== undefined) {
    process.stdout.write(`window: from the first to the last sample under ${windowFn}\n`);
  }
  if (firesText !== undefined) {
    const fires = Number(firesText);
    const gc = selfByName.get("(garbage collector)") ?? 0;
    process.stdout.write(
      `per fire (${fires} fires): ${(busy / fires / 1000).toFixed(3)} ms busy, of which ${(gc / fires / 1000).toFixed(3)} ms garbage collection (${((gc / busy) * 100).toFixed(1)}%)\n`,
    );
  }
  show("self time by layer", selfByLayer);
  show("self time by function", selfByName);
  show("self time by file", selfByFile);
  show("inclusive time, punctual's code (src/)", inclusive, (k) => k.includes(" src/"));
}

main();
