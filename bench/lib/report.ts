/**
 * The human-readable result: one markdown section per run (machine, date, load, then one table per
 * scenario and the ratios to the peers), printed at the end and, with `--write-docs`, written into
 * docs/benchmarks.md between its result markers.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as prettier from "prettier";
import type { BenchConfig } from "./config.js";
import type { Machine } from "./machine.js";
import type { BurstFigures, IdleFigures, SteadyFigures } from "./results.js";
import { ratio } from "./stats.js";
import type { Distribution } from "./stats.js";

export interface BenchResults {
  readonly machine: Machine;
  readonly mode: "full" | "quick";
  readonly durationSeconds: number;
  readonly dueBurst: readonly BurstFigures[];
  readonly cronSecond: readonly BurstFigures[];
  readonly steady: readonly SteadyFigures[];
  readonly idle: readonly IdleFigures[];
}

const START = "<!-- bench:results:start -->";
const END = "<!-- bench:results:end -->";

function ms(value: number | null): string {
  return value === null ? "–" : `${Math.round(value)}`;
}

function sec(value: number | null): string {
  return value === null ? "–" : (value / 1000).toFixed(2);
}

function num(value: number | null, digits = 0): string {
  return value === null ? "–" : value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

function lost(r: { losses: number | null; pending: number }): string {
  return r.losses === null ? `– (${num(r.pending)} not yet run)` : num(r.losses);
}

function late(d: Distribution): string {
  return `${ms(d.p50)} / ${ms(d.p99)} / ${ms(d.max)}`;
}

function cpu(c: BurstFigures["cpu"]): string {
  const p = c.perThousand;
  return `${num(p.process, 3)} + ${num(p.database, 3)}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function byTarget<T extends { system: string; target: string }>(
  rows: readonly T[],
  system: string,
  target: string,
): T | undefined {
  return rows.find((r) => r.system === system && r.target === target);
}

function burstSection(rows: readonly BurstFigures[], title: string, intro: string): string {
  if (rows.length === 0) return "";
  const body = table(
    [
      "system",
      "tasks",
      "all launched (s)",
      "all finished (s)",
      "fires/s",
      "drain/s",
      "lateness p50 / p99 / max (ms)",
      "duplicates",
      "losses",
      "CPU s per 1,000 (workers + db)",
      "event loop delay max (ms)",
    ],
    rows.map((r) => [
      r.label +
        (r.timedOut ? " (timed out)" : "") +
        (r.setupOverrunMs > 0 ? " (setup overran)" : ""),
      num(r.tasks),
      sec(r.allLaunchedMs),
      sec(r.allCompletedMs),
      num(r.firesPerSecond),
      num(r.drainPerSecond),
      late(r.lateness),
      num(r.duplicates),
      lost(r),
      cpu(r.cpu),
      num(r.loopDelay.maxMs),
    ]),
  );
  const punctual = byTarget(rows, "punctual", "pg2");
  const ratios = ["pg-boss", "graphile-worker"].flatMap((peer) => {
    const other = rows.find((r) => r.system === peer);
    if (punctual === undefined || other === undefined) return [];
    return [
      `${peer}: fires/s ×${num(ratio(punctual.firesPerSecond, other.firesPerSecond), 2)}, ` +
        `p99 lateness ×${num(ratio(punctual.lateness.p99, other.lateness.p99), 2)}, ` +
        `CPU per 1,000 ×${num(ratio(punctual.cpu.perThousand.total, other.cpu.perThousand.total), 2)}`,
    ];
  });
  const ratioText =
    ratios.length === 0
      ? ""
      : `\nRatios punctual (PostgreSQL, 2 replicas) / peer: ${ratios.join("; ")}.\n`;
  const repeated = rows.filter((r) => (r.repeats?.length ?? 1) > 1);
  const repeatText =
    repeated.length === 0
      ? ""
      : `\nEach row is the median of ${repeated[0]?.repeats?.length ?? 0} runs (by fires/s; duplicates and ` +
        `losses count every run), the systems taking turns in each round. fires/s of every run: ` +
        `${repeated.map((r) => `${r.label} ${(r.repeats ?? []).map((f) => num(f)).join(" / ")}`).join("; ")}.\n`;
  return `### ${title}\n\n${intro}\n\n${body}\n${ratioText}${repeatText}`;
}

function steadySection(rows: readonly SteadyFigures[]): string {
  if (rows.length === 0) return "";
  const first = rows[0];
  const body = table(
    [
      "system",
      "tasks",
      "window (s)",
      "launched / due",
      "fires/s",
      "lateness p50 / p99 / max (ms)",
      "CPU s per 1,000 (replicas + db)",
      "event loop delay max (ms)",
      "duplicates",
      "losses",
    ],
    rows.map((r) => [
      r.label,
      num(r.tasks),
      num(r.windowSeconds),
      `${num(r.launched)} / ${num(r.expected)}`,
      num(r.firesPerSecond),
      late(r.lateness),
      cpu(r.cpu),
      num(r.loopDelay.maxMs),
      num(r.duplicates),
      lost(r),
    ]),
  );
  return `### Steady: about 1,000 fires per second\n\n${first?.schedules ?? ""}.\n\n${body}\n`;
}

function idleSection(rows: readonly IdleFigures[]): string {
  if (rows.length === 0) return "";
  const body = table(
    [
      "system",
      "tasks",
      "window (s)",
      "CPU per replica (% of a core)",
      "db backends (% of a core)",
      "replica RSS (MiB)",
    ],
    rows.map((r) => [
      r.label,
      num(r.tasks),
      num(r.windowSeconds, 1),
      num(r.replicaCpuPercent, 2),
      num(r.databaseCpuPercent, 2),
      r.replicaRssMiB.map((v) => num(v)).join(", "),
    ]),
  );
  return `### Idle: none due\n\n${body}\n`;
}

export function renderMarkdown(results: BenchResults, config: BenchConfig): string {
  const m = results.machine;
  const load = (l: readonly number[]): string => l.map((v) => v.toFixed(2)).join(" / ");
  const header =
    `## ${m.date.slice(0, 10)} (${results.mode}${results.mode === "quick" ? ": `npm run bench -- --quick`" : ""})\n\n` +
    `Machine: ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB; Node ${m.node}; ${m.postgres} on the same machine. ` +
    `Run at ${m.date}, ${Math.round(results.durationSeconds)} s; load average (1/5/15 min) ` +
    `${load(m.loadAtStart)} at the start, ${load(m.loadAtEnd)} at the end.\n` +
    (Math.max(m.loadAtStart[0] ?? 0, m.loadAtEnd[0] ?? 0) > m.nproc / 2
      ? `\n**Measured under load**: other work shared the machine (1-minute load average up to ` +
        `${Math.max(m.loadAtStart[0] ?? 0, m.loadAtEnd[0] ?? 0).toFixed(1)} on ${m.nproc} cores), so ` +
        `absolute figures are low and noisy; compare rows of this run rather than runs.\n`
      : "");
  const peerCronNote = config.peerCron
    ? ""
    : " The peers' cron rows are left out of this run (they wait for a minute boundary; see --peer-cron).";
  return [
    header,
    burstSection(
      results.dueBurst,
      `Due-burst: ${num(config.burstTasks)} once tasks due at one instant`,
      "Times from the due instant. Lateness: `launched_at - fire_at` for punctual, handler start - due " +
        "instant for the peers. CPU: the scheduler's processes + the PostgreSQL backends of its database.",
    ),
    burstSection(
      results.cronSecond,
      `${num(config.cronTasks)} cron tasks due at the same instant`,
      "punctual: a seconds-field cron, all due at one second; the peers: `* * * * *`, all due at one " +
        `minute boundary (their finest granularity).${peerCronNote}`,
    ),
    steadySection(results.steady),
    idleSection(results.idle),
  ]
    .filter((s) => s !== "")
    .join("\n");
}

/**
 * Replaces the results between the markers of docs/benchmarks.md with `markdown`, formatted by the
 * project's Prettier (so `npm run lint` stays clean).
 */
export async function writeDocs(path: string, markdown: string): Promise<void> {
  const current = readFileSync(path, "utf8");
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${path} lacks the ${START} / ${END} markers`);
  const text = `${current.slice(0, start)}${START}\n\n${markdown}\n${END}${current.slice(end + END.length)}`;
  const options = (await prettier.resolveConfig(path)) ?? {};
  writeFileSync(path, await prettier.format(text, { ...options, filepath: path }));
}
