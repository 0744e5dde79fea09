/**
 * The human-readable result: one markdown section per run (machine, date, load, then one table per
 * scenario and the ratios to the peers), printed at the end and, with `--write-docs`, written into
 * docs/benchmarks.md between its result markers.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as prettier from "prettier";
import { PEERS, peerSettingsNote } from "../peers/peer-config.js";
import type { FailoverFigures } from "../scenarios/failover.js";
import type { BenchConfig } from "./config.js";
import { counts, late, lost, MISSING, ms, num, sec, table, times } from "./format.js";
import type { Machine } from "./machine.js";
import type { BurstFigures, IdleFigures, RoundTripFigures, SteadyFigures } from "./results.js";
import { ratio } from "./stats.js";
import { VARIANT_LIMIT, variantSpread } from "./variants.js";

export interface BenchResults {
  readonly machine: Machine;
  readonly mode: "full" | "quick";
  readonly durationSeconds: number;
  readonly dueBurst: readonly BurstFigures[];
  readonly cronSecond: readonly BurstFigures[];
  readonly steady: readonly SteadyFigures[];
  readonly idle: readonly IdleFigures[];
  readonly failover: readonly FailoverFigures[];
}

const START = "<!-- bench:results:start -->";
const END = "<!-- bench:results:end -->";

function cpu(c: BurstFigures["cpu"]): string {
  const p = c.perThousand;
  return `${num(p.process, 3)} + ${num(p.database, 3)}`;
}

function rowLabel(r: BurstFigures): string {
  if (r.unavailable !== undefined) return `${r.label}: ${r.unavailable}`;
  const notes: string[] = [];
  if (r.timedOut) notes.push(`timed out after ${sec(r.waitedMs ?? null)} s`);
  if (r.setupOverrunMs > 0) notes.push(`setup overran the instant by ${sec(r.setupOverrunMs)} s`);
  return notes.length === 0 ? r.label : `${r.label} (${notes.join("; ")})`;
}

function roundTrips(figures: RoundTripFigures | null): string {
  if (figures === null) return MISSING;
  const kb = figures.kbReceived === undefined ? MISSING : num(figures.kbReceived, 0);
  return `${num(figures.statements, 1)} / ${num(figures.transactions, 1)} / ${num(figures.heartbeats, 1)} / ${kb}`;
}

function burstTable(rows: readonly BurstFigures[]): string {
  return table(
    [
      "system",
      "tasks",
      "enqueue (s)",
      "all launched (s)",
      "all finished (s)",
      "fires/s",
      "drain/s",
      "lateness p50 / p99 / max (ms)",
      "duplicates",
      "losses",
      "CPU s per 1,000 (workers + db)",
      "WAL per fire (bytes)",
      "per 1,000 fires: statements / transactions / heartbeats / kB read from PostgreSQL",
      "event loop delay max (ms)",
    ],
    rows.map((r) =>
      r.unavailable !== undefined
        ? [rowLabel(r), num(r.tasks), ...Array.from({ length: 12 }, () => MISSING)]
        : [
            rowLabel(r),
            num(r.tasks),
            sec(r.enqueue?.ms ?? null),
            sec(r.allLaunchedMs),
            sec(r.allCompletedMs),
            num(r.firesPerSecond),
            num(r.drainPerSecond),
            late(r.lateness),
            num(r.duplicates),
            lost(r),
            cpu(r.cpu),
            num(r.cpu.walBytesPerFire),
            roundTrips(r.roundTrips ?? null),
            num(r.loopDelay.maxMs),
          ],
    ),
  );
}

/** The punctual row the peers are compared with: pg2 as created, the fastest creation mode measured. */
function headline(rows: readonly BurstFigures[]): BurstFigures | undefined {
  const candidates = rows.filter(
    (r) =>
      r.system === "punctual" &&
      r.target === "pg2" &&
      r.variant === "as-created" &&
      r.unavailable === undefined,
  );
  return candidates.find((r) => r.enqueue?.how.startsWith("tasks.createMany")) ?? candidates[0];
}

/** The variants of one burst (the headline's creation mode), their spread and their peer ratios. */
function variantsText(rows: readonly BurstFigures[]): string {
  const main = headline(rows);
  if (main === undefined) return "";
  const variants = rows.filter(
    (r) =>
      r.system === "punctual" &&
      r.target === "pg2" &&
      r.unavailable === undefined &&
      r.enqueue?.how === main.enqueue?.how,
  );
  if (variants.length < 2) return "";
  const spread = variantSpread(variants);
  const verdict =
    spread.withinLimit === null
      ? ""
      : spread.withinLimit
        ? ` (within the ×${VARIANT_LIMIT} limit)`
        : ` (**over the ×${VARIANT_LIMIT} limit**)`;
  const each = variants
    .map(
      (r) =>
        `${r.variant ?? ""} ${num(r.firesPerSecond)}/s, p99 ${r.timedOut ? `> ${num(r.waitedMs ?? null)}` : ms(r.lateness.p99)} ms`,
    )
    .join("; ");
  const graphile = rows.find((r) => r.system === "graphile-worker" && r.unavailable === undefined);
  const vsGraphile =
    graphile === undefined
      ? ""
      : ` Against graphile-worker (local queue), fires/s: ${variants
          .map(
            (r) => `${r.variant ?? ""} ${times(ratio(r.firesPerSecond, graphile.firesPerSecond))}`,
          )
          .join(", ")} (milestone: ×1 or more in every variant, goal ×1.5).`;
  return (
    `\nVariants (PostgreSQL, 2 replicas, ${main.enqueue?.how ?? ""}): ${each}. Spread: fires/s ` +
    `${times(spread.firesRatio, spread.atLeast)}, p99 lateness ${times(spread.p99Ratio, spread.atLeast)}${verdict}.${vsGraphile}\n`
  );
}

function peerRatios(rows: readonly BurstFigures[]): string {
  const punctual = headline(rows);
  if (punctual === undefined) return "";
  const ratios = rows.flatMap((other) => {
    if (other.system === "punctual" || other.unavailable !== undefined) return [];
    return [
      `${other.system}: fires/s ${times(ratio(punctual.firesPerSecond, other.firesPerSecond))}, ` +
        `p99 lateness ${times(ratio(punctual.lateness.p99, other.lateness.p99))}, ` +
        `CPU per 1,000 ${times(ratio(punctual.cpu.perThousand.total, other.cpu.perThousand.total))}` +
        (other.cpu.walBytesPerFire === null
          ? ""
          : `, WAL per fire ${times(ratio(punctual.cpu.walBytesPerFire, other.cpu.walBytesPerFire))}`),
    ];
  });
  return ratios.length === 0
    ? ""
    : `\nRatios punctual (${punctual.label}) / peer: ${ratios.join("; ")}.\n`;
}

function repeatsText(rows: readonly BurstFigures[]): string {
  const repeated = rows.filter((r) => (r.repeats?.length ?? 1) > 1 && r.unavailable === undefined);
  if (repeated.length === 0) return "";
  return (
    `\nEach row is the median of ${repeated[0]?.repeats?.length ?? 0} runs (by fires/s; duplicates and ` +
    `losses count every run), the systems taking turns in each round. fires/s (p99 ms) of every run: ` +
    `${repeated
      .map(
        (r) =>
          `${r.label} ${(r.repeats ?? [])
            .map((f, i) => `${num(f)} (${ms(r.repeatP99s?.[i] ?? null)})`)
            .join(" / ")}`,
      )
      .join("; ")}.\n`
  );
}

function peerNotes(rows: readonly BurstFigures[]): string {
  const peers = PEERS.filter((p) => rows.some((r) => r.system === p));
  if (peers.length === 0) return "";
  return `\nThe peers' settings:\n\n${peers.map((p) => `- ${peerSettingsNote(p)}.`).join("\n")}\n`;
}

function burstSection(
  rows: readonly BurstFigures[],
  title: string,
  intro: string,
  withVariants: boolean,
): string {
  if (rows.length === 0) return "";
  const body = burstTable(rows);
  return (
    `### ${title}\n\n${intro}\n\n${body}\n` +
    (withVariants ? variantsText(rows) : "") +
    peerRatios(rows) +
    repeatsText(rows) +
    (withVariants ? peerNotes(rows) : "")
  );
}

function failoverSection(rows: readonly FailoverFigures[]): string {
  if (rows.length === 0) return "";
  const body = table(
    [
      "system",
      "tasks",
      "killed after (s)",
      "claims held",
      "claims taken over or reconciled after (s)",
      "what became of them",
      "burst ended after (s)",
      "undisturbed (s)",
      "duplicates",
      "not executed",
      "unrecorded by the killed replica's ledger, succeeded per the runs",
    ],
    rows.map((r) => [
      r.label + (r.timedOut ? " (timed out)" : ""),
      num(r.tasks),
      sec(r.killedAfterMs),
      num(r.heldAtKill),
      sec(r.recoveredMs),
      counts(r.heldOutcome),
      sec(r.totalMs),
      sec(r.undisturbedTotalMs),
      num(r.duplicates),
      num(r.notExecuted),
      num(r.ledgerLost),
    ]),
  );
  const first = rows[0];
  return (
    `### Failover: kill -9 of a replica mid-burst\n\n` +
    `The replica holding the most claims is killed with SIGKILL once about a third of the burst has ` +
    `run (at the first moment after that when it holds at least 1% of the burst, up to 50). The replicas ` +
    `run with the default lease (${sec(first?.leaseMs ?? null)} s) and liveness timeout ` +
    `(${sec(first?.livenessMs ?? null)} s): a dead replica's claims are taken over once it has been silent ` +
    `for the liveness timeout, without waiting for the lease. "Not executed" counts occurrences no ledger recorded ` +
    `and whose run the killed replica did not finish as succeeded. The killed replica's ledger loses up to its ` +
    `last 100 ms (written every 100 ms, it dies with the process): an occurrence missing from it whose run it ` +
    `finished as succeeded (recorded only after the handler returned) was executed, and is counted apart.\n\n${body}\n`
  );
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
  const sizes = [...new Set(results.dueBurst.map((r) => r.tasks))].sort((a, b) => a - b);
  const burstIntro =
    "Times from the due instant. Tasks are created through punctual's library before the instant " +
    "(enqueue: the time that took; the peers: their own bulk insert). Lateness: handler start - due " +
    "instant (`fire_at` for punctual), from the handlers' ledger, for every system. CPU: the scheduler's " +
    "processes + the PostgreSQL backends of its database (for BullMQ, the Redis server).";
  return [
    header,
    ...sizes.map((size) =>
      burstSection(
        results.dueBurst.filter((r) => r.tasks === size),
        `Due-burst: ${num(size)} once tasks due at one instant`,
        burstIntro,
        true,
      ),
    ),
    burstSection(
      results.cronSecond,
      `${num(config.cronTasks)} cron tasks due at the same instant`,
      "punctual: a seconds-field cron, all due at one second; the peers: `* * * * *`, all due at one " +
        `minute boundary (their finest granularity).${peerCronNote}`,
      false,
    ),
    failoverSection(results.failover),
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
