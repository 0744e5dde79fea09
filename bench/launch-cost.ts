/**
 * `node --min-semi-space-size=256 --max-semi-space-size=256 --expose-gc --import tsx bench/launch-cost.ts [--runs N] [--rounds N]
 * [--handler noop|reads-run] [--checkout PATH]...` (docs/benchmarks.md, the worker's side of a launch): what the runtime and the
 * handler launcher cost per fire, with no store and no driver, for one or several checkouts in one
 * process. Each round, for each checkout in turn (the order alternating between rounds): N claimed
 * runs of an in-process no-op handler, handed to the checkout's `Launches` 250 at a time as a claim
 * hands them, launched, their handlers run and their launch answers and verdicts written through a
 * stand-in for the store's batched write (answered on the next turn, as a round trip would be).
 * Measured per fire: the promises made (an `async_hooks` count, deterministic), the heap allocated
 * (`heapUsed` before and after; the young generation is made large enough that no collection runs
 * in a round, which the script checks) and the process's CPU (user + system, noisy). Each
 * `--checkout` (default: this one) is a source tree with this project's `src/` and `test/domain/`.
 * `--handler reads-run` runs a handler that reads what the bench's replica's handler reads of
 * `ctx.run` (its id, task, attempt and two instants, bench/replica.ts) instead of one that reads nothing.
 * `--instants spread` gives each run its own nominal time (1,037 ms apart, so about one run in 58
 * changes minute) instead of one instant shared by every run, which formatInstant's memo answers at once.
 */
import { createHook } from "node:async_hooks";
import { loadavg } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./lib/argv-option.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUNS = Number(option("runs", "10000"));
const ROUNDS = Number(option("rounds", "7"));
const CLAIM = 250;
const HANDLER = option("handler", "noop");
const SPREAD = option("instants", "same") === "spread";
if (HANDLER !== "noop" && HANDLER !== "reads-run") throw new Error(`--handler ${HANDLER}?`);
/** What the reading handler read, kept so that no read is optimised away. */
let readLength = 0;
interface RunRead {
  readonly id: string;
  readonly task_id: string;
  readonly scheduled_for: string;
  readonly fire_at: string;
  readonly attempt: number;
}
const handler =
  HANDLER === "noop"
    ? () => undefined
    : ({ run }: { run: RunRead }) => {
        readLength +=
          run.id.length +
          run.task_id.length +
          run.scheduled_for.length +
          run.fire_at.length +
          run.attempt;
      };
const CHECKOUTS = process.argv.flatMap((arg, at) =>
  arg === "--checkout" && process.argv[at + 1] !== undefined
    ? [resolve(process.argv[at + 1] ?? "")]
    : [],
);
if (CHECKOUTS.length === 0) CHECKOUTS.push(ROOT);

interface Launches {
  start(item: { run: unknown; task: unknown }): void;
  reportCompletion(runId: string, verdict: unknown, attempt?: number): Promise<void>;
  readonly size: number;
  readonly pending: readonly Promise<void>[];
}

interface Checkout {
  readonly root: string;
  /** A fresh launcher and runtime; `written` counts the writes the stand-in store took. */
  readonly make: () => { launches: Launches; written: () => number; settled: () => Promise<void> };
  /** `count` claimed runs of the no-op handler, each with its task. */
  readonly claimedRuns: (count: number) => { run: unknown; task: unknown }[];
}

async function load(root: string): Promise<Checkout> {
  const launchesModule = (await import(`${root}/src/runtime/launches.ts`)) as {
    Launches: new (deps: Record<string, unknown>) => Launches;
  };
  const { HandlerLauncher } = (await import(
    `${root}/src/adapters/launchers/handler/handler-launcher.ts`
  )) as {
    HandlerLauncher: new (handlers: Record<string, typeof handler>) => {
      connect(sink: Record<string, unknown>): void;
      settled(): Promise<void>;
    } & Record<string, unknown>;
  };
  const { BackgroundWork } = (await import(`${root}/src/runtime/background-work.ts`)) as {
    BackgroundWork: new (log: unknown) => { pending: readonly Promise<unknown>[] };
  };
  const { SystemClock } = (await import(`${root}/src/runtime/clock.ts`)) as {
    SystemClock: new () => { now(): number };
  };
  const { silentLogger } = (await import(`${root}/src/application/events/logger.ts`)) as {
    silentLogger: unknown;
  };
  const builders = (await import(`${root}/test/domain/builders.ts`)) as {
    buildRun(overrides: Record<string, unknown>): { id: string };
    buildTask(overrides: Record<string, unknown>): unknown;
    claimed(run: unknown, now: number): { id: string; status: string };
  };
  const policy = { policy: { leaseMs: 60_000 } };
  return {
    root,
    make() {
      const clock = new SystemClock();
      const launcher = new HandlerLauncher({ noop: handler });
      const background = new BackgroundWork(silentLogger);
      let written = 0;
      const runWrites = {
        isRefusal: () => false,
        recordRunWrites(writes: readonly { kind: string }[]) {
          written += writes.length;
          // Each write changed its run; what the runtime reads of a result: its kind, the run's status
          // and whether to stop the target.
          return new Promise((done) => {
            setImmediate(() => {
              done(
                writes.map((write) => ({
                  kind: "changed",
                  change: {
                    run: { status: write.kind === "launch" ? "running" : "succeeded" },
                  },
                })),
              );
            });
          });
        },
      };
      const launches = new launchesModule.Launches({
        runWrites,
        budget: policy,
        launcher,
        clock,
        log: silentLogger,
        background,
        writeBatch: 1000,
        giveUp: new AbortController().signal,
        cancelTarget: () => undefined,
        completed: () => undefined,
      });
      launcher.connect({
        completed: (runId: string, verdict: unknown, attempt: number) =>
          launches.reportCompletion(runId, verdict, attempt),
        lost: () => Promise.resolve(),
        heartbeat: () => Promise.resolve(),
      });
      return {
        launches,
        written: () => written,
        async settled() {
          while (launches.size > 0 || background.pending.length > 0) {
            await Promise.all([...launches.pending, ...background.pending]);
            await launcher.settled();
          }
        },
      };
    },
    claimedRuns(count) {
      const now = Date.now();
      const task = builders.buildTask({ target: { kind: "handler", name: "noop", input: null } });
      return Array.from({ length: count }, (_, n) => ({
        run: builders.claimed(
          builders.buildRun({ id: `run-${n}`, scheduledFor: SPREAD ? now - n * 1037 : now }),
          now,
        ),
        task,
      }));
    },
  };
}

let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === "PROMISE") promises++;
  },
});
let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });

interface Figures {
  readonly promises: number;
  readonly bytes: number;
  readonly cpuUs: number;
  readonly collected: boolean;
}

/** One round of `checkout`: per fire, promises made, heap bytes allocated and CPU microseconds. */
async function round(checkout: Checkout, counting = false): Promise<Figures> {
  const items = checkout.claimedRuns(RUNS);
  const runtime = checkout.make();
  globalThis.gc?.();
  // The collection's entry reaches the observer later: let it arrive before counting.
  await new Promise((done) => setTimeout(done, 20));
  const gcBefore = collections;
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  promises = 0;
  // Counting promises makes each one heavier: a round counts, or measures, not both.
  if (counting) hook.enable();
  for (let at = 0; at < items.length; at += CLAIM) {
    for (const item of items.slice(at, at + CLAIM)) runtime.launches.start(item);
    // The next claim comes after a round trip.
    await new Promise((done) => setImmediate(done));
  }
  await runtime.settled();
  hook.disable();
  const cpu = process.cpuUsage(cpuBefore);
  const heapAfter = process.memoryUsage().heapUsed;
  await new Promise((done) => setTimeout(done, 20));
  if (runtime.written() !== 2 * RUNS) {
    throw new Error(`${checkout.root}: ${runtime.written()} writes for ${RUNS} runs`);
  }
  return {
    promises: counting ? promises / RUNS : NaN,
    bytes: (heapAfter - heapBefore) / RUNS,
    cpuUs: (cpu.user + cpu.system) / RUNS,
    collected: collections !== gcBefore,
  };
}

const checkouts = await Promise.all(CHECKOUTS.map(load));
const results = new Map<string, Figures[]>();
console.error(
  `load average at the start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")}`,
);
// A warm-up round of each, not counted (the first round compiles), then one that counts promises.
const counted = new Map<string, number>();
for (const checkout of checkouts) await round(checkout);
for (const checkout of checkouts)
  counted.set(checkout.root, (await round(checkout, true)).promises);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const checkout of order) {
    const figures = await round(checkout);
    const list = results.get(checkout.root) ?? [];
    list.push(figures);
    results.set(checkout.root, list);
  }
}
console.error(
  `instants: ${SPREAD ? "spread" : "same"}; handler: ${HANDLER}${HANDLER === "noop" ? "" : ` (read ${readLength} characters)`}`,
);
console.error(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")}`,
);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

console.log(
  `| checkout | promises per fire | heap bytes per fire (median; rounds with no collection) | CPU µs per fire (median, all rounds) |`,
);
console.log("| --- | ---: | ---: | --- |");
for (const [root, list] of results) {
  const clean = list.filter((f) => !f.collected);
  console.log(
    `| ${root} | ${(counted.get(root) ?? NaN).toFixed(2)} | ${
      clean.length === 0 ? "(every round collected)" : median(clean.map((f) => f.bytes)).toFixed(0)
    } (${clean.length}/${list.length}) | ${median(list.map((f) => f.cpuUs)).toFixed(1)} (${list
      .map((f) => f.cpuUs.toFixed(1))
      .join(", ")}) |`,
  );
}
