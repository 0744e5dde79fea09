/**
 * The bench's settings: sizes of each scenario (full or `--quick`), which parts run, and where the
 * PostgreSQL server is. Parsed once from the command line.
 */
import { parseArgs } from "node:util";

export const SCENARIOS = ["due-burst", "cron-second", "steady", "idle"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** The punctual configurations every scenario runs on (docs/benchmarks.md: SQLite alone, PostgreSQL 1 and 2 replicas). */
export const TARGETS = ["sqlite", "pg1", "pg2"] as const;
export type Target = (typeof TARGETS)[number];

export interface BenchConfig {
  readonly quick: boolean;
  readonly scenarios: readonly ScenarioName[];
  readonly targets: readonly Target[];
  readonly peers: boolean;
  /** The peers' 1,000-cron workload waits for a minute boundary: off under `--quick` unless asked. */
  readonly peerCron: boolean;
  readonly writeDocs: boolean;
  /** Replicas run with `--cpu-prof`; profiles go to `bench/results/profiles/`. */
  readonly profile: boolean;
  /** The server's maintenance database; bench databases are created beside it. */
  readonly adminUrl: string;
  readonly burstTasks: number;
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

  --quick                 small sizes (2,000 burst, 10,000 steady over 15 s, idle over 10 s): < 3 min
  --only=a,b              scenarios: ${SCENARIOS.join(", ")}
  --targets=a,b           punctual targets: ${TARGETS.join(", ")}
  --no-peers              skip pg-boss and graphile-worker
  --peer-cron             run the peers' 1,000-cron workload under --quick too (waits for a minute)
  --write-docs            write the table into docs/benchmarks.md
  --profile               run punctual replicas with --cpu-prof (bench/results/profiles/)
  --repeat=N              due-burst runs per system, median shown (default 3; 1 under --quick)
  --burst=N --steady-tasks=N --steady-seconds=S --idle-seconds=S
  --idle-sqlite=N --idle-postgres=N --cron-tasks=N
  env PUNCTUAL_BENCH_DATABASE_URL  (default postgres://postgres@127.0.0.1:5432/postgres)
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

function count(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll("_", ""));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

export function parseConfig(argv: readonly string[]): BenchConfig | null {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      targets: { type: "string" },
      "no-peers": { type: "boolean", default: false },
      "peer-cron": { type: "boolean", default: false },
      "write-docs": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      burst: { type: "string" },
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
  return {
    quick,
    scenarios: list(values.only, SCENARIOS, "only"),
    targets: list(values.targets, TARGETS, "targets"),
    peers: !values["no-peers"],
    peerCron: !values["no-peers"] && (!quick || values["peer-cron"]),
    writeDocs: values["write-docs"],
    profile: values.profile,
    adminUrl:
      process.env["PUNCTUAL_BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres",
    burstTasks: count(values.burst, quick ? 2_000 : 10_000, "burst"),
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
