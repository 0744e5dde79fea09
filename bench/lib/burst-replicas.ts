/**
 * The set-up `bench/fire-wal.ts` and `bench/fire-profile.ts` share: replicas of the library in this
 * process on one PostgreSQL database (one no-op handler, a budget), and a burst of once tasks made by
 * `tasks.createMany`, all due at one instant a few seconds ahead; with `FIRE_SCHEDULE=cron` in the
 * environment, cron tasks whose seconds field falls on that instant instead (the cron-second scenario's
 * tasks, bench/scenarios/cron-second.ts).
 */
import { createScheduler, postgres } from "../../src/index.js";
import type { Scheduler } from "../../src/index.js";
import { cronAtSecond } from "../scenarios/cron-second.js";

/** `replicas` started schedulers on `db`, each with the handler `noop` and a budget of `budget`. */
export async function startBurstReplicas(
  db: string,
  replicas: number,
  budget: number,
): Promise<Scheduler[]> {
  const schedulers: Scheduler[] = [];
  for (let i = 0; i < replicas; i++) {
    const scheduler = createScheduler({
      store: postgres(db),
      handlers: { noop: () => undefined },
      policy: { maxConcurrentRuns: budget },
      replicaId: `wal-${i}`,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (o, m) => {
          console.error("warn", m, JSON.stringify(o));
        },
        error: (o, m) => {
          console.error("error", m, o);
        },
      },
    });
    await scheduler.start();
    schedulers.push(scheduler);
  }
  return schedulers;
}

/**
 * Makes `tasks` once tasks (or crons, `FIRE_SCHEDULE=cron`) on `noop` through `scheduler`, 1,000 per
 * `createMany`, due at a whole second about 8 s ahead; returns that instant (ms). Throws when making them overran it.
 */
export async function createDueBurst(scheduler: Scheduler, tasks: number): Promise<number> {
  const dueAt = Math.ceil((Date.now() + 8000) / 1000) * 1000;
  const crons = process.env["FIRE_SCHEDULE"] === "cron";
  const inputs = Array.from({ length: tasks }, () =>
    crons
      ? cronAtSecond(dueAt)
      : {
          title: "fire-wal",
          schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
          target: { kind: "handler", name: "noop" },
        },
  );
  const createMany = (
    scheduler.tasks as unknown as {
      createMany: (inputs: readonly unknown[]) => Promise<unknown>;
    }
  ).createMany.bind(scheduler.tasks);
  for (let i = 0; i < inputs.length; i += 1000) await createMany(inputs.slice(i, i + 1000));
  if (Date.now() > dueAt - 1500) throw new Error("creation overran the due instant");
  return dueAt;
}
