/**
 * `npx tsx bench/verdict-cost.ts [--tasks N] [--batch N] [--rounds N] [--checkout PATH]...`
 * (docs/benchmarks.md, the verdict without a read): the cost of writing a burst's launch answers and
 * verdicts on PostgreSQL (`changeRuns`, the write-behind flush), for one or several checkouts in one
 * process, so that every checkout sees the same load. Each round, for each checkout in turn (the order
 * alternating between rounds): N once tasks on a handler in a fresh schema, admitted and claimed, then
 * written in batches of `--batch` runs as an in-process handler's burst writes them: each run's launch
 * answer (fenced by its token, carrying the run as claimed: `expect`) followed by its verdict. A checkout
 * that does not know `expect` ignores it. Per run written: the process's own user + system CPU
 * (`process.cpuUsage`: the driver, the mapping, the garbage), the statements sent, the database's
 * execution time and shared buffers touched (`pg_stat_statements`, when the server has it loaded; its
 * figures are the whole server's, so use a private cluster) and the WAL written (the server's, likewise).
 * Prints the median of every figure and each round's CPU. Uses `PUNCTUAL_TEST_DATABASE_URL` (a scratch
 * database is created and dropped).
 */
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./lib/argv-option.js";
import { createPostgresTestDatabase } from "../test/helpers/postgres.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TASKS = Number(option("tasks", "2000"));
const BATCH = Number(option("batch", "250"));
const ROUNDS = Number(option("rounds", "5"));
const CHECKOUTS = process.argv.flatMap((arg, at) =>
  arg === "--checkout" && process.argv[at + 1] !== undefined
    ? [resolve(process.argv[at + 1] ?? "")]
    : [],
);
if (CHECKOUTS.length === 0) CHECKOUTS.push(ROOT);

interface Claimed {
  readonly run: { readonly id: string; readonly claimToken: string | null };
  readonly task: { readonly version: number };
}
interface Request {
  readonly id: string;
  readonly token?: string;
  readonly decide: (run: unknown, task: unknown) => unknown;
  readonly expect?: unknown;
}
interface Store {
  readonly tasks: { insertTasks(tasks: readonly unknown[]): Promise<void> };
  readonly runs: {
    changeRuns(requests: readonly Request[]): Promise<readonly { readonly kind: string }[]>;
  };
  close(): Promise<void>;
}

/** What a round uses of a checkout, each module loaded from it. */
interface Checkout {
  readonly root: string;
  readonly open: (options: Record<string, unknown>) => Promise<Store>;
  readonly ids: () => () => string;
  readonly steps: {
    POLICY: unknown;
    admitDue(store: Store, now: number, limit: number): Promise<{ queuedRuns: unknown[] }>;
    claimDue(
      store: Store,
      now: number,
      options: { limit: number; maxConcurrentRuns: number; handlerNames: Set<string> },
    ): Promise<readonly Claimed[]>;
  };
  readonly fixtures: {
    buildTask(fixture: Record<string, unknown>): unknown;
    onceAt(at: number): unknown;
    minute(n: number, ms?: number): number;
    handlerTarget(name: string): unknown;
  };
  readonly transitions: {
    applyLaunchAnswer(run: unknown, answer: unknown, ctx: unknown): unknown;
    completeRun(run: unknown, verdict: unknown, ctx: unknown): unknown;
  };
  readonly runTaskContext: (task: unknown) => unknown;
}

async function load(root: string): Promise<Checkout> {
  const store = (await import(`${root}/src/adapters/storage/postgres/postgres-store.ts`)) as {
    openPostgresStore: Checkout["open"];
  };
  const ids = (await import(`${root}/src/adapters/storage/shared/time-ordered-id.ts`)) as {
    createIdGenerator: Checkout["ids"];
  };
  const change = (await import(`${root}/src/domain/run-change.ts`)) as {
    runTaskContext: Checkout["runTaskContext"];
  };
  return {
    root,
    open: store.openPostgresStore,
    ids: ids.createIdGenerator,
    steps: (await import(`${root}/test/contract/store-steps.ts`)) as Checkout["steps"],
    fixtures: (await import(`${root}/test/contract/fixtures.ts`)) as Checkout["fixtures"],
    transitions: (await import(`${root}/src/domain/run-transitions.ts`)) as Checkout["transitions"],
    runTaskContext: change.runTaskContext,
  };
}

const db = await createPostgresTestDatabase();
const admin = db.pool(1);
// Only where the server preloads it (a private cluster): otherwise the database's time is not measured.
// The extension can be created where the library is not loaded; reading it then fails.
const hasStatements = await admin
  .query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
  .then(() => admin.query("SELECT 1 FROM pg_stat_statements LIMIT 1"))
  .then(
    () => true,
    () => false,
  );

interface Figures {
  cpu: number;
  statements: number;
  execMs: number;
  blocks: number;
  wal: number;
}
const figures = new Map<string, Figures[]>();

async function serverState(): Promise<{ lsn: string; execMs: number; blocks: number }> {
  const lsn = (await admin.query("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0] as {
    lsn: string;
  };
  if (!hasStatements) return { lsn: lsn.lsn, execMs: 0, blocks: 0 };
  const s = (
    await admin.query(
      "SELECT coalesce(sum(total_exec_time), 0)::float8 AS ms," +
        " coalesce(sum(shared_blks_hit + shared_blks_read), 0)::float8 AS blocks FROM pg_stat_statements" +
        " WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_current_wal_lsn%'",
    )
  ).rows[0] as { ms: number; blocks: number };
  return { lsn: lsn.lsn, execMs: s.ms, blocks: s.blocks };
}

async function walSince(lsn: string): Promise<number> {
  const r = (
    await admin.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS b", [
      lsn,
    ])
  ).rows[0] as { b: number };
  return r.b;
}

/** One round of `checkout`: the figures per run written. */
async function round(checkout: Checkout): Promise<Figures> {
  const { fixtures, steps, transitions } = checkout;
  const schema = db.freshSchema();
  const newId = checkout.ids();
  let statements = 0;
  const base = db.pool(4);
  const pool = {
    query: (statement: unknown, values?: unknown[]) => {
      statements++;
      return base.query(statement as string, values);
    },
    connect: async () => {
      const client = await base.connect();
      return {
        query: (statement: unknown, values?: unknown[]) => {
          statements++;
          return client.query(statement as string, values);
        },
        release: (destroy?: boolean) => {
          client.release(destroy);
        },
        on: (event: "error", listener: (error: Error) => void) => client.on(event, listener),
        off: (event: "error", listener: (error: Error) => void) => client.off(event, listener),
      };
    },
    end: () => base.end(),
  };
  const store = await checkout.open({ newId, schema, pool });
  try {
    const due = fixtures.minute(1);
    const tasks = Array.from({ length: TASKS }, () =>
      fixtures.buildTask({
        schedule: fixtures.onceAt(due),
        target: fixtures.handlerTarget("noop"),
      }),
    );
    for (let i = 0; i < TASKS; i += 500) await store.tasks.insertTasks(tasks.slice(i, i + 500));
    while ((await steps.admitDue(store, due, 250)).queuedRuns.length > 0);
    const claimed: Claimed[] = [];
    for (;;) {
      const got = await steps.claimDue(store, due, {
        limit: 250,
        maxConcurrentRuns: 1_000_000,
        handlerNames: new Set(["noop"]),
      });
      if (got.length === 0) break;
      claimed.push(...got);
    }
    const now = fixtures.minute(1, 5);
    const policy = steps.POLICY;
    const before = await serverState();
    statements = 0;
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < claimed.length; i += BATCH) {
      const requests: Request[] = claimed.slice(i, i + BATCH).flatMap((c) => [
        {
          id: c.run.id,
          token: c.run.claimToken ?? "",
          decide: (run, task) =>
            transitions.applyLaunchAnswer(
              run,
              { outcome: { kind: "launched", targetRunId: null } },
              { now, task, policy },
            ),
          expect: {
            run: c.run,
            task: checkout.runTaskContext(c.task),
            taskVersion: c.task.version,
          },
        },
        {
          id: c.run.id,
          decide: (run, task) =>
            transitions.completeRun(run, { status: "succeeded", result: null }, { now, task }),
        },
      ]);
      const results = await store.runs.changeRuns(requests);
      if (results.some((r) => r.kind !== "changed")) throw new Error("a write was refused");
    }
    const cpu = process.cpuUsage(cpuBefore);
    const sent = statements;
    const wal = await walSince(before.lsn);
    const after = await serverState();
    const n = Math.max(1, claimed.length);
    return {
      cpu: (cpu.user + cpu.system) / n,
      statements: (sent * 1000) / n,
      execMs: ((after.execMs - before.execMs) * 1000) / n,
      blocks: (after.blocks - before.blocks) / n,
      wal: wal / n,
    };
  } finally {
    await store.close();
  }
}

const checkouts = await Promise.all(CHECKOUTS.map(load));
const loadAtStart = loadavg()[0] ?? 0;
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const checkout of order) {
    const f = await round(checkout);
    figures.set(checkout.root, [...(figures.get(checkout.root) ?? []), f]);
  }
}
await db.drop();

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  `launch answers and verdicts written per run, ${TASKS} tasks, batches of ${BATCH} runs, ${ROUNDS} rounds;` +
    ` load average ${loadAtStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end` +
    (hasStatements ? "" : " (no pg_stat_statements: database time not measured)"),
);
console.log(
  "| checkout | worker CPU (µs) | statements per 1,000 | database time (µs) | buffers | WAL (bytes) | CPU per round (µs) |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
for (const [root, values] of figures) {
  const m = (pick: (f: Figures) => number) => median(values.map(pick));
  console.log(
    `| ${root} | ${m((f) => f.cpu).toFixed(1)} | ${m((f) => f.statements).toFixed(1)} | ${m((f) => f.execMs).toFixed(1)} | ${m((f) => f.blocks).toFixed(1)} | ${m((f) => f.wal).toFixed(0)} | ${values.map((f) => f.cpu.toFixed(1)).join(", ")} |`,
  );
}
process.exit(0);
