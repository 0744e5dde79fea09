/**
 * Scenario (a), due-burst (docs/benchmarks.md, issue 14): N once tasks due at one instant, no-op handlers; time
 * until all are launched, fires/s, lateness, duplicates and losses. punctual's tasks are created through
 * the library (`tasks.create` 32 in flight, and `tasks.createMany` where it exists); on PostgreSQL with 2
 * replicas the burst also runs after `ANALYZE` and with a month of history in `runs` (the variants). The
 * same N jobs then run through the peers at their documented throughput settings, 2 worker processes
 * each. Repeated `--repeat` times (3 in a full run), round by round; each row is its system's median run.
 * A full run adds a second, larger burst (50,000) run once.
 */
import type { BenchConfig, Target } from "../lib/config.js";
import { LibraryClient } from "../lib/library.js";
import type { CreationMode } from "../lib/library.js";
import { medianRun } from "../lib/median-run.js";
import { progress } from "../lib/progress.js";
import { punctualBurst, unavailableBurst } from "../lib/punctual-burst.js";
import type { BurstPlan } from "../lib/punctual-burst.js";
import type { BurstFigures } from "../lib/results.js";
import type { VariantName } from "../lib/variants.js";
import { peerBurst } from "../peers/peer-run.js";

export const DUE_BURST = "due-burst";

export function onceInput(dueAt: number): unknown {
  return {
    title: "due-burst",
    schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
    target: { kind: "handler", name: "noop" },
  };
}

/** Whether this library has `tasks.createMany` (asked of a scheduler that never opens its store). */
export function libraryHasCreateMany(): boolean {
  return new LibraryClient({ kind: "sqlite", path: ":memory:" }).createManyAvailable;
}

/** The creation mode the variants use: the fastest the library has. */
export function bestCreation(config: BenchConfig): CreationMode {
  return libraryHasCreateMany() && config.creation.includes("createMany") ? "createMany" : "create";
}

interface Cell {
  readonly target: Target;
  readonly creation: CreationMode;
  readonly variant: VariantName;
}

/** The punctual rows of one burst: every creation mode as created, and pg2's variants. */
export function punctualCells(config: BenchConfig, large: boolean): Cell[] {
  const cells: Cell[] = [];
  const best = bestCreation(config);
  for (const target of config.targets) {
    // pg1 (and, in the large burst, SQLite) only in the best mode: the comparison is made on pg2.
    const modes = target === "pg2" || (target === "sqlite" && !large) ? config.creation : [best];
    if (config.variants.includes("as-created") && !(large && target === "pg1")) {
      for (const creation of modes) cells.push({ target, creation, variant: "as-created" });
    }
    if (target !== "pg2") continue;
    for (const variant of config.variants) {
      if (variant !== "as-created") cells.push({ target, creation: best, variant });
    }
  }
  return cells;
}

async function burstOf(
  config: BenchConfig,
  count: number,
  repeat: number,
): Promise<BurstFigures[]> {
  const hasCreateMany = libraryHasCreateMany();
  const systems: (() => Promise<BurstFigures>)[] = [];
  for (const cell of punctualCells(config, count > config.burstTasks)) {
    const plan: BurstPlan = { scenario: DUE_BURST, count, input: onceInput, ...cell };
    systems.push(async () => {
      if (plan.creation === "createMany" && !hasCreateMany)
        return unavailableBurst(config, cell.target, plan, "`tasks.createMany` not available");
      try {
        return await punctualBurst(config, cell.target, plan);
      } catch (error) {
        // One failed setup (a creation that overran its instant) must not cost the rest of the run.
        const message = error instanceof Error ? error.message : String(error);
        progress(DUE_BURST, `${cell.target} ${cell.creation} ${cell.variant} failed: ${message}`);
        return unavailableBurst(config, cell.target, plan, `failed: ${message}`);
      }
    });
  }
  for (const peer of config.peers) systems.push(() => peerBurst(config, peer, DUE_BURST, count));
  // Round by round, every system once per round, so that a slow spell of the machine falls on all of
  // them alike; each row is then the system's median run.
  const runs: BurstFigures[][] = systems.map(() => []);
  for (let round = 0; round < repeat; round++) {
    if (repeat > 1) progress(DUE_BURST, `round ${round + 1} of ${repeat} (${count} tasks)`);
    for (const [i, system] of systems.entries()) runs[i]?.push(await system());
  }
  return runs.map(medianRun);
}

export async function dueBurst(config: BenchConfig): Promise<BurstFigures[]> {
  const rows = await burstOf(config, config.burstTasks, config.burstRepeat);
  if (config.largeBurstTasks > 0) rows.push(...(await burstOf(config, config.largeBurstTasks, 1)));
  return rows;
}
