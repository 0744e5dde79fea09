/**
 * Proof that the bulk seeder writes what the library writes: for each kind of task the bench uses, one
 * task made by `scheduler.tasks.create(input)` and one by `seedTasks`, at the same virtual instant, read
 * back through the store and compared field by field (all but `id` and `webhook_secret`, which are fresh
 * per task either way). Runs at the start of every bench; a difference stops the bench.
 */
import { isDeepStrictEqual } from "node:util";
import { join } from "node:path";
import { createScheduler, postgres, sqlite } from "../../src/index.js";
import type { StoreFactory } from "../../src/index.js";
import { VirtualClock } from "../../src/testing.js";
import { taskId } from "../../src/domain/ids.js";
import type { Instant } from "../../src/domain/time.js";
import type { SeedTarget } from "./seed.js";
import { seedTasks } from "./seed.js";

function sample(now: number): unknown[] {
  const at = (ms: number): string => new Date(ms).toISOString();
  const target = { kind: "handler", name: "noop" };
  return [
    { title: "burst", schedule: { type: "once", run_at: at(now + 60_000) }, target },
    {
      title: "cron",
      schedule: { type: "cron", cron: "7 */2 * * * *", timezone: "UTC", start_at: at(now + 5000) },
      target,
    },
    {
      title: "interval",
      schedule: { type: "interval", every: 100, start_at: at(now + 3000) },
      target,
    },
  ];
}

/** Throws when a seeded task differs from the library's. */
export async function checkSeeder(store: SeedTarget, folder: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const factory: StoreFactory =
    store.kind === "sqlite"
      ? sqlite(join(folder, "seed-check.db"))
      : postgres(store.url, { schema: "seed_check" });
  const seedTarget: SeedTarget =
    store.kind === "sqlite"
      ? { kind: "sqlite", path: join(folder, "seed-check.db") }
      : { ...store, schema: "seed_check" };
  const scheduler = createScheduler({
    store: factory,
    clock: new VirtualClock(now),
    handlers: { noop: () => undefined },
  });
  try {
    const rt = await scheduler.runtime();
    for (const input of sample(now)) {
      const created = await scheduler.tasks.create(input);
      const [seeded] = await seedTasks(seedTarget, [{ input, count: 1 }], {
        now: now as Instant,
        keepIds: true,
      });
      const seededId = seeded?.ids[0];
      if (seededId === undefined) throw new Error("seed check: nothing seeded");
      const viaLibrary = await rt.store.tasks.findTask({ kind: "all" }, taskId(created.task.id));
      const viaSeeder = await rt.store.tasks.findTask({ kind: "all" }, taskId(seededId));
      if (viaLibrary === null || viaSeeder === null)
        throw new Error("seed check: a task is missing");
      const strip = (task: object): object => ({ ...task, id: "", webhookSecret: "" });
      if (!isDeepStrictEqual(strip(viaLibrary), strip(viaSeeder))) {
        throw new Error(
          `seed check (${store.kind}): the seeder's task differs from the library's:\n` +
            `${JSON.stringify(viaLibrary)}\n${JSON.stringify(viaSeeder)}`,
        );
      }
    }
  } finally {
    await scheduler.stop();
  }
}
