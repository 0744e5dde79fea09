/**
 * Scenario (b2), steady: N cron and interval tasks (half each) spread so that about 1,000 come due every
 * second, created through the library (`tasks.createMany` where it exists, else `tasks.create` 32 in
 * flight), measured over a window once the replicas have settled: lateness (`launched_at - fire_at`), CPU
 * per 1,000 fires (replica processes, and the PostgreSQL backends serving the database), duplicates and
 * losses against the occurrences the schedules define for the window.
 */
import type { BenchConfig, Target } from "../lib/config.js";
import { Cluster, REPLICAS_OF } from "../lib/cluster.js";
import { checkLedger, readLedgers } from "../lib/ledger.js";
import { BackendCpuSampler } from "../lib/proc-cpu.js";
import { progress } from "../lib/progress.js";
import { reportStatements, TARGET_LABEL } from "../lib/punctual-burst.js";
import { countUnfinished, readRuns, statusCounts } from "../lib/punctual-runs.js";
import type { SteadyFigures } from "../lib/results.js";
import { cpuFigures, loopDelayOf } from "../lib/results.js";
import { CREATION_LABEL, LibraryClient } from "../lib/library.js";
import { pace } from "../lib/pace.js";
import { distribution, round } from "../lib/stats.js";
import { sleepUntil, waitUntil, wholeSecondAfter } from "../lib/wait.js";
import { cpuSecondsBetween } from "../lib/workers.js";
import { nextOccurrences } from "../../src/index.js";
import type { NextOccurrencesSchedule } from "../../src/index.js";
import { bestCreation } from "./due-burst.js";

/** `count` tasks created from the same user input (what `scheduler.tasks.create(input)` takes). */
interface TaskVariant {
  readonly input: { readonly schedule: NextOccurrencesSchedule };
  readonly count: number;
}

export const STEADY = "steady";
const FIRES_PER_SECOND = 1000;
/** Cron periods a seconds-field cron can express evenly (divisors of a minute, and whole minutes). */
const CRON_PERIODS = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60, 120, 180, 240, 300, 600];

/** Splits `total` into `parts` counts that differ by at most one. */
function spread(total: number, parts: number): number[] {
  return Array.from(
    { length: parts },
    (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0),
  );
}

/** The cron expressions of one period, one per phase (second, or second and minute). */
function cronSlots(period: number): string[] {
  // The strict grammar wants a range before a step: `k-59/p`.
  if (period <= 60) return Array.from({ length: period }, (_, k) => `${k}-59/${period} * * * * *`);
  const minutes = period / 60;
  const slots: string[] = [];
  for (let m = 0; m < minutes; m++)
    for (let s = 0; s < 60; s++) slots.push(`${s} ${m}-59/${minutes} * * * *`);
  return slots;
}

export interface SteadyPlan {
  readonly variants: TaskVariant[];
  readonly description: string;
}

/** Half crons, half intervals, each spread evenly over its period, first fires at `startAt`. */
export function steadyPlan(tasks: number, startAt: number): SteadyPlan {
  const target = { kind: "handler", name: "noop" };
  const period = Math.max(1, Math.round(tasks / FIRES_PER_SECOND));
  const cronPeriod = CRON_PERIODS.reduce((best, p) =>
    Math.abs(p - period) < Math.abs(best - period) ? p : best,
  );
  const crons = cronSlots(cronPeriod);
  const cronCounts = spread(Math.floor(tasks / 2), crons.length);
  const intervalCounts = spread(tasks - Math.floor(tasks / 2), period);
  const at = (ms: number): string => new Date(ms).toISOString();
  const variants: TaskVariant[] = [
    ...crons.map((cron, i) => ({
      input: {
        title: "steady-cron",
        schedule: { type: "cron" as const, cron, timezone: "UTC", start_at: at(startAt) },
        target,
      },
      count: cronCounts[i] ?? 0,
    })),
    ...intervalCounts.map((count, k) => ({
      input: {
        title: "steady-interval",
        schedule: { type: "interval" as const, every: period, start_at: at(startAt + k * 1000) },
        target,
      },
      count,
    })),
  ].filter((v) => v.count > 0);
  const rate = Math.floor(tasks / 2) / cronPeriod + (tasks - Math.floor(tasks / 2)) / period;
  return {
    variants,
    description:
      `${Math.floor(tasks / 2)} crons every ${cronPeriod} s (${crons.length} phases) + ` +
      `${tasks - Math.floor(tasks / 2)} intervals every ${period} s (${period} phases): ~${Math.round(rate)} fires/s`,
  };
}

/** Every occurrence (`task@nominal`) the created tasks have in [from, to). */
function expectedOccurrences(
  variants: readonly TaskVariant[],
  ids: readonly string[],
  from: number,
  to: number,
): Set<string> {
  const expected = new Set<string>();
  let first = 0;
  for (const variant of variants) {
    const times = nextOccurrences(variant.input.schedule, {
      after: new Date(from - 1),
      count: 1000,
    })
      .map((d) => d.getTime())
      .filter((t) => t < to);
    for (const id of ids.slice(first, first + variant.count))
      for (const t of times) expected.add(`${id}@${t}`);
    first += variant.count;
  }
  return expected;
}

async function steadyOn(config: BenchConfig, target: Target): Promise<SteadyFigures> {
  const scope = `${STEADY} ${target}`;
  const cluster = await Cluster.create(config, STEADY, target);
  try {
    progress(scope, `starting ${REPLICAS_OF[target]} replica(s)`);
    await cluster.startReplicas(REPLICAS_OF[target]);
    const creation = bestCreation(config);
    const startAt = wholeSecondAfter(pace.leadMs(target, creation, config.steadyTasks));
    const plan = steadyPlan(config.steadyTasks, startAt);
    const client = new LibraryClient(cluster.store);
    const inputs = plan.variants.flatMap((v) => Array.from({ length: v.count }, () => v.input));
    const created = await client.create(inputs, creation, (n) => {
      if (n % 10_000 === 0) progress(scope, `created ${n}/${inputs.length}`);
    });
    await client.close();
    pace.observe(target, creation, inputs.length, created.ms);
    progress(
      scope,
      `created ${config.steadyTasks} tasks with ${CREATION_LABEL[creation]} in ${created.ms} ms: ${plan.description}`,
    );
    // Measure once the first fires have passed and the replicas run steadily.
    const from =
      Math.ceil((Math.max(startAt, Date.now()) + (config.quick ? 0 : 2000)) / 1000) * 1000;
    const to = from + config.steadySeconds * 1000;
    const sampler =
      cluster.databaseName === null
        ? null
        : new BackendCpuSampler(config.adminUrl, cluster.databaseName);
    await sleepUntil(from - 300);
    await sampler?.start();
    await cluster.stats(true, 2000);
    const before = await cluster.cpu();
    const cpuFrom = Date.now();
    progress(scope, `measuring ${config.steadySeconds} s from ${new Date(from).toISOString()}`);
    let lastReport = Date.now();
    while (Date.now() < to) {
      await sleepUntil(Math.min(to, Date.now() + 1000));
      const atEnd = Date.now() >= to && Date.now() - lastReport >= 1000;
      if (Date.now() - lastReport >= 5000 || atEnd) {
        lastReport = Date.now();
        // A short wait: a replica whose event loop is held answers late, which is a finding, not a stall.
        const stats = await cluster.stats(false, 1000);
        const executed = stats.every((s) => s !== null)
          ? `executed ${stats.reduce((sum, s) => sum + s.executed, 0)}`
          : "a replica's event loop is busy (no answer within 1 s)";
        progress(
          scope,
          `${((Date.now() - from) / 1000).toFixed(0)}/${config.steadySeconds} s, ${executed}`,
        );
      }
    }
    const after = await cluster.cpu();
    const cpuTo = Date.now();
    const final = await cluster.stats(false, 10_000);
    const databaseSeconds = (await sampler?.stop()) ?? null;
    const expected = expectedOccurrences(plan.variants, created.ids, from, to);
    const window = { from, to };
    // A replica that cannot keep up leaves a backlog: wait for it, within bounds (--quick: 3 min total).
    const drainMs = config.quick ? 3000 : 30_000;
    const settled = await waitUntil(
      async () => (await countUnfinished(cluster.store, window)) === 0,
      { timeoutMs: drainMs, everyMs: 250 },
    );
    await cluster.stopReplicas();
    if (!settled)
      progress(scope, `the window's runs had not all finished ${drainMs / 1000} s after it`);
    const statements = reportStatements(scope, cluster);
    const runs = await readRuns(cluster.store, window);
    const inWindow = (occurrence: string): boolean => {
      const at = Number(occurrence.slice(occurrence.lastIndexOf("@") + 1));
      return at >= from && at < to;
    };
    const ledger = readLedgers(cluster.ledgers).filter((e) => inWindow(e.occurrence));
    const check = checkLedger(ledger, expected);
    const launchedRuns = runs.filter((r) => r.launchedAt !== null);
    const firesInCpuWindow = launchedRuns.filter(
      (r) => r.launchedAt !== null && r.launchedAt >= cpuFrom && r.launchedAt < cpuTo,
    ).length;
    progress(scope, `${launchedRuns.length}/${expected.size} occurrences launched`);
    return {
      system: "punctual",
      target,
      label: TARGET_LABEL[target],
      tasks: config.steadyTasks,
      windowSeconds: config.steadySeconds,
      windowStart: new Date(from).toISOString(),
      expected: expected.size,
      launched: launchedRuns.length,
      firesPerSecond: round(launchedRuns.length / config.steadySeconds, 0),
      lateness: distribution(launchedRuns.map((r) => (r.launchedAt ?? 0) - r.fireAt)),
      handlerLateness: distribution(ledger.map((e) => e.startedAt - e.dueAt)),
      duplicates: check.extraExecutions,
      losses: settled ? check.losses : null,
      pending: settled ? 0 : check.losses,
      unexpected: check.unexpected,
      statuses: statusCounts(runs),
      cpu: cpuFigures(cpuSecondsBetween(before, after), databaseSeconds, firesInCpuWindow),
      loopDelay: loopDelayOf(final),
      schedules: plan.description,
      ...(statements.length === 0 ? {} : { statements }),
    };
  } finally {
    await cluster.dispose();
  }
}

export async function steady(config: BenchConfig): Promise<SteadyFigures[]> {
  const rows: SteadyFigures[] = [];
  for (const target of config.targets) rows.push(await steadyOn(config, target));
  return rows;
}
