/**
 * `npx tsx bench/claim-cost.ts [--tasks N] [--rounds N] [--checkout PATH]...`
 * (docs/benchmarks.md, the claim's narrow read):
 * the worker-side CPU of the PostgreSQL claim per claimed run, for one or several checkouts in one
 * process, so that every checkout sees the same load. Each round, for each checkout in turn (the order
 * alternating between rounds): N once tasks in a fresh schema, admitted by one store, then claimed 250 at
 * a time by that store (`same`: the definitions admission read are held) and, in a second round, by
 * another store on the schema (`other`: none held, as for a replica claiming the runs another admitted).
 * The figure is the process's own user + system CPU across the claims (`process.cpuUsage`), which the
 * driver's parsing, the mapping and the garbage they make are part of; PostgreSQL's work is not. Each
 * `--checkout` (default: this one) is a source tree with this project's `src/` and `test/contract/`.
 * Prints the median and every round, in microseconds per claimed run, and likewise the admission's CPU per
 * admitted task (the admitting store's `admitDue` batches of 250, unfused: the task rows' read and
 * decoding, the runs' insert), with the heap it allocated per task when no collection ran meanwhile (run
 * `node --max-semi-space-size=256 --import tsx bench/claim-cost.ts ...` so that none does). Uses `PUNCTUAL_TEST_DATABASE_URL`
 * (a scratch database is created and dropped).
 */
import { loadavg } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./lib/argv-option.js";
import { createPostgresTestDatabase } from "../test/helpers/postgres.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TASKS = Number(option("tasks", "2000"));
const ROUNDS = Number(option("rounds", "5"));
const CHECKOUTS = process.argv.flatMap((arg, at) =>
  arg === "--checkout" && process.argv[at + 1] !== undefined
    ? [resolve(process.argv[at + 1] ?? "")]
    : [],
);
if (CHECKOUTS.length === 0) CHECKOUTS.push(ROOT);

/** What a round uses of a checkout: its store and its contract suite's steps, each loaded from it. */
interface Checkout {
  readonly root: string;
  readonly open: (options: Record<string, unknown>) => Promise<Store>;
  readonly ids: () => () => string;
  readonly steps: {
    admitDue(store: Store, now: number, limit: number): Promise<{ queuedRuns: unknown[] }>;
    claimDue(
      store: Store,
      now: number,
      options: { limit: number; maxConcurrentRuns: number; handlerNames: Set<string> },
    ): Promise<readonly unknown[]>;
  };
  readonly fixtures: {
    buildTask(fixture: Record<string, unknown>): unknown;
    onceAt(at: number): unknown;
    minute(n: number): number;
    handlerTarget(name: string): unknown;
  };
}

interface Store {
  readonly tasks: { insertTasks(tasks: readonly unknown[]): Promise<void> };
  close(): Promise<void>;
}

async function load(root: string): Promise<Checkout> {
  const store = (await import(`${root}/src/adapters/storage/postgres/postgres-store.ts`)) as {
    openPostgresStore: Checkout["open"];
  };
  const ids = (await import(`${root}/src/adapters/storage/shared/time-ordered-id.ts`)) as {
    createIdGenerator: Checkout["ids"];
  };
  return {
    root,
    open: store.openPostgresStore,
    ids: ids.createIdGenerator,
    steps: (await import(`${root}/test/contract/store-steps.ts`)) as Checkout["steps"],
    fixtures: (await import(`${root}/test/contract/fixtures.ts`)) as Checkout["fixtures"],
  };
}

let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });

const db = await createPostgresTestDatabase();
const checkouts = await Promise.all(CHECKOUTS.map(load));
const figures = new Map<string, number[]>();

/** One round of `checkout`: the CPU per claimed run and per admitted task, in microseconds. */
async function round(
  checkout: Checkout,
  mode: "same" | "other",
): Promise<{ claim: number; admission: number; admissionBytes: number }> {
  const { fixtures, steps } = checkout;
  const schema = db.freshSchema();
  const newId = checkout.ids();
  const open = () => checkout.open({ newId, schema, pool: db.pool(4) });
  const admitter = await open();
  const claimer = mode === "other" ? await open() : admitter;
  try {
    const due = fixtures.minute(1);
    const tasks = Array.from({ length: TASKS }, () =>
      fixtures.buildTask({
        schedule: fixtures.onceAt(due),
        target: fixtures.handlerTarget("noop"),
      }),
    );
    for (let i = 0; i < TASKS; i += 500) await admitter.tasks.insertTasks(tasks.slice(i, i + 500));
    // The collections' entries reach the observer later: let earlier ones arrive before counting.
    await new Promise((done) => setTimeout(done, 20));
    const collectionsBefore = collections;
    const heapBefore = process.memoryUsage().heapUsed;
    const admitting = process.cpuUsage();
    let admitted = 0;
    for (;;) {
      const queued = (await steps.admitDue(admitter, due, 250)).queuedRuns.length;
      if (queued === 0) break;
      admitted += queued;
    }
    const admission = process.cpuUsage(admitting);
    const heapAfter = process.memoryUsage().heapUsed;
    await new Promise((done) => setTimeout(done, 20));
    const admissionBytes =
      collections === collectionsBefore ? (heapAfter - heapBefore) / Math.max(1, admitted) : NaN;
    const handlerNames = new Set(["noop"]);
    const before = process.cpuUsage();
    let claimed = 0;
    for (;;) {
      const got = await steps.claimDue(claimer, due, {
        limit: 250,
        maxConcurrentRuns: 1_000_000,
        handlerNames,
      });
      if (got.length === 0) break;
      claimed += got.length;
    }
    const cpu = process.cpuUsage(before);
    return {
      claim: (cpu.user + cpu.system) / Math.max(1, claimed),
      admission: (admission.user + admission.system) / Math.max(1, admitted),
      admissionBytes,
    };
  } finally {
    await admitter.close();
    if (claimer !== admitter) await claimer.close();
  }
}

const loadAtStart = loadavg()[0] ?? 0;
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const mode of ["same", "other"] as const) {
    for (const checkout of order) {
      const us = await round(checkout, mode);
      const key = `${checkout.root} ${mode}`;
      figures.set(key, [...(figures.get(key) ?? []), us.claim]);
      const admissionKey = `${checkout.root} admission`;
      figures.set(admissionKey, [...(figures.get(admissionKey) ?? []), us.admission]);
      if (!Number.isNaN(us.admissionBytes)) {
        const bytesKey = `${checkout.root} bytes`;
        figures.set(bytesKey, [...(figures.get(bytesKey) ?? []), us.admissionBytes]);
      }
    }
  }
}
await db.drop();

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  `claim CPU per claimed run, ${TASKS} tasks, ${ROUNDS} rounds; load average ${loadAtStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end`,
);
console.log("| checkout | claim: definitions (or the admission) | median (µs) | rounds (µs) |");
console.log("| --- | --- | ---: | --- |");
for (const [key, values] of figures) {
  const [root, mode] = key.split(" ");
  console.log(
    `| ${root} | ${mode === "same" ? "held (same store)" : mode === "other" ? "not held (other store)" : mode === "admission" ? "admission, per task" : "admission, heap bytes per task (no collection)"} | ${median(values).toFixed(1)} | ${values.map((v) => v.toFixed(1)).join(", ")} |`,
  );
}
process.exit(0);
