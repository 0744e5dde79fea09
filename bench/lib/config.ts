/**
 * The bench's settings: sizes of each scenario (full or `--quick`), which parts run, and where the
 * PostgreSQL server is. Parsed once from the command line.
 */
import { parseArgs } from "node:util";
import { CREATION_MODES } from "./library.js";
import type { CreationMode } from "./library.js";
import { VARIANTS } from "./variants.js";
import type { VariantName } from "./variants.js";
import { PEERS } from "../peers/peer-config.js";
import type { PeerName } from "../peers/peer-config.js";

export const SCENARIOS = ["due-burst", "cron-second", "steady", "idle", "failover"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
/** What `--quick` runs unless `--only` says otherwise: the bursts, which the claim path work needs. */
export const QUICK_SCENARIOS: readonly ScenarioName[] = ["due-burst", "cron-second"];

/** The punctual configurations every scenario runs on (docs/benchmarks.md: SQLite alone, PostgreSQL 1 and 2 replicas). */
export const TARGETS = ["sqlite", "pg1", "pg2"] as const;
export type Target = (typeof TARGETS)[number];

export interface BenchConfig {
  readonly quick: boolean;
  readonly scenarios: readonly ScenarioName[];
  readonly targets: readonly Target[];
  /** punctual's PostgreSQL variants of the due-burst (`--variants`). */
  readonly variants: readonly VariantName[];
  /** How the burst's tasks are created (`--creation`). */
  readonly creation: readonly CreationMode[];
  /** The peers that run (`--peers`; none with `--no-peers`). */
  readonly peers: readonly PeerName[];
  /** The peers' 1,000-cron workload waits for a minute boundary: off under `--quick` unless asked. */
  readonly peerCron: boolean;
  readonly writeDocs: boolean;
  /** Replicas run with `--cpu-prof`; profiles go to `bench/results/profiles/`. */
  readonly profile: boolean;
  /** Replicas write their timelines to `bench/results/traces/` (`npx tsx bench/trace-summary.ts`). */
  readonly trace: boolean;
  /** The server's maintenance database; bench databases are created beside it. */
  readonly adminUrl: string;
  readonly burstTasks: number;
  /** The second, larger due-burst (50,000 in a full run; off under `--quick` unless given). */
  readonly largeBurstTasks: number;
  /** Terminal runs already in `runs` for the history variant. */
  readonly historyRuns: number;
  /** Tasks of the failover burst. */
  readonly failoverTasks: number;
  readonly redisUrl: string;
  /** Due-burst runs per system; the table shows the median run (`--repeat`). */
  readonly burstRepeat: number;
  readonly cronTasks: number;
  readonly steadyTasks: number;
  readonly steadySeconds: number;
  readonly idleSqliteTasks: number;
  readonly idlePostgresTasks: number;
  readonly idleSeconds: number;
  /** Worker processes of each peer (issue 6: 2). */
  readonly peerWorkers: number;
}

const HELP = `npm run bench -- [options]

  --quick                 small sizes, ${QUICK_SCENARIOS.join(" and ")} only: < 3 min (2,000 burst,
                          100,000 historic runs; --only adds steady, idle, failover at small sizes)
  --only=a,b              scenarios: ${SCENARIOS.join(", ")}
  --targets=a,b           punctual targets: ${TARGETS.join(", ")}
  --variants=a,b          PostgreSQL burst variants: ${VARIANTS.join(", ")}
  --creation=a,b          how punctual's burst tasks are made: ${CREATION_MODES.join(", ")}
  --peers=a,b             peers: ${PEERS.join(", ")}
  --no-peers              no peer at all
  --peer-cron             run the peers' 1,000-cron workload under --quick too (waits for a minute)
  --write-docs            write the table into docs/benchmarks.md
  --profile               run punctual replicas with --cpu-prof (bench/results/profiles/)
  --trace                 each punctual replica writes its timeline: admission rounds, claims, SQL
                          statements, handler starts (bench/results/traces/; bench/trace-summary.ts)
  --repeat=N              due-burst runs per system, median shown (default 3; 1 under --quick)
  --burst=N --large-burst=N (0: off) --history=N --failover-tasks=N
  --steady-tasks=N --steady-seconds=S --idle-seconds=S
  --idle-sqlite=N --idle-postgres=N --cron-tasks=N
  env PUNCTUAL_BENCH_DATABASE_URL  (default postgres://postgres@127.0.0.1:5432/postgres)
  env PUNCTUAL_BENCH_REDIS_URL     (BullMQ's server; default redis://127.0.0.1:6379)
`;

function list<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  name: string,
): readonly T[] {
  if (value === undefined) return allowed;
  const picked = value.split(",").map((v) => v.trim());
  for (const item of picked) {
    if (!(allowed as readonly string[]).includes(item)) {
      throw new Error(`--${name}: unknown ${item} (one of ${allowed.join(", ")})`);
    }
  }
  return allowed.filter((a) => picked.includes(a));
}

function count(value: string | undefined, fallback: number, name: string, least = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll("_", "").replaceAll(",", ""));
  if (!Number.isInteger(n) || n < least)
    throw new Error(`--${name} must be an integer >= ${least}`);
  return n;
}

/**
 * How long a burst is waited for from its due instant before the table says how many had not run: long
 * enough for a healthy burst many times over, short enough that a cliff costs a bounded minute.
 */
export function burstWaitMs(config: Pick<BenchConfig, "quick">, tasks: number): number {
  return config.quick ? 20_000 + tasks * 2 : 30_000 + tasks * 3;
}

export function parseConfig(argv: readonly string[]): BenchConfig | null {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      targets: { type: "string" },
      variants: { type: "string" },
      creation: { type: "string" },
      peers: { type: "string" },
      "no-peers": { type: "boolean", default: false },
      "peer-cron": { type: "boolean", default: false },
      "write-docs": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      trace: { type: "boolean", default: false },
      burst: { type: "string" },
      "large-burst": { type: "string" },
      history: { type: "string" },
      "failover-tasks": { type: "string" },
      repeat: { type: "string" },
      "cron-tasks": { type: "string" },
      "steady-tasks": { type: "string" },
      "steady-seconds": { type: "string" },
      "idle-seconds": { type: "string" },
      "idle-sqlite": { type: "string" },
      "idle-postgres": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return null;
  }
  const quick = values.quick;
  const peers = values["no-peers"] ? [] : list(values.peers, PEERS, "peers");
  const burstTasks = count(values.burst, quick ? 2_000 : 10_000, "burst");
  return {
    quick,
    scenarios:
      values.only === undefined && quick ? QUICK_SCENARIOS : list(values.only, SCENARIOS, "only"),
    targets: list(values.targets, TARGETS, "targets"),
    variants: list(values.variants, VARIANTS, "variants"),
    creation: list(values.creation, CREATION_MODES, "creation"),
    peers,
    peerCron: peers.length > 0 && (!quick || values["peer-cron"]),
    writeDocs: values["write-docs"],
    profile: values.profile,
    trace: values.trace,
    adminUrl:
      process.env["PUNCTUAL_BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres",
    burstTasks,
    largeBurstTasks: count(values["large-burst"], quick ? 0 : 50_000, "large-burst", 0),
    historyRuns: count(values.history, quick ? 100_000 : 1_000_000, "history"),
    failoverTasks: count(values["failover-tasks"], burstTasks, "failover-tasks"),
    redisUrl: process.env["PUNCTUAL_BENCH_REDIS_URL"] ?? "redis://127.0.0.1:6379",
    burstRepeat: count(values.repeat, quick ? 1 : 3, "repeat"),
    cronTasks: count(values["cron-tasks"], 1_000, "cron-tasks"),
    steadyTasks: count(values["steady-tasks"], quick ? 10_000 : 100_000, "steady-tasks"),
    steadySeconds: count(values["steady-seconds"], quick ? 15 : 60, "steady-seconds"),
    idleSqliteTasks: count(values["idle-sqlite"], quick ? 10_000 : 100_000, "idle-sqlite"),
    idlePostgresTasks: count(values["idle-postgres"], quick ? 100_000 : 1_000_000, "idle-postgres"),
    idleSeconds: count(values["idle-seconds"], quick ? 10 : 30, "idle-seconds"),
    peerWorkers: 2,
  };
}
