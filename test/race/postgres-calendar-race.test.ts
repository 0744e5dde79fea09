/**
 * Calendars raced on one PostgreSQL schema from several replicas, each with its own pool (issue 22):
 * tasks created naming a calendar while other replicas put new versions of it, and while one deletes
 * it. Afterwards no task holds a stale snapshot of the calendar, and a delete never succeeds while a
 * task naming the calendar got in (each create either got in, and the delete was refused, or was
 * refused itself).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { TaskService } from "../../src/application/tasks/task-service.js";
import { calendarStamps } from "../../src/domain/calendar.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import { ALL, T0 } from "../contract/fixtures.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const REPLICAS = 4;
const ROUNDS = 6;
const runnable = await raceTestsRunnable("test/race/postgres-calendar-race.test.ts");

function service(store: PostgresStore, replica: number): TaskService {
  let ids = 0;
  return new TaskService({
    store,
    threads: { threadExists: () => Promise.resolve(true) },
    policy: DEFAULT_POLICY,
    newId: () => `r${replica}-${String(++ids).padStart(6, "0")}`,
    newSecret: () => "secret",
    handlerNames: null,
    agentServers: null,
    signals: { wake: () => undefined, cancelRequested: () => undefined },
  });
}

const task = (n: number) => ({
  title: `nightly ${n}`,
  schedule: {
    type: "cron",
    cron: "0 0 * * *",
    timezone: "UTC",
    exclude: [{ calendar: "closures" }],
  },
  target: { kind: "handler", name: "log" },
});

const date = (round: number, replica: number): string =>
  `2031-0${1 + (round % 9)}-${String(10 + replica).padStart(2, "0")}`;

describe.skipIf(!runnable)(`postgres: calendars raced from ${REPLICAS} replicas`, () => {
  let database: PostgresTestDatabase;
  let stores: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  beforeEach(async () => {
    stores = await openReplicaStores(database, REPLICAS, database.freshSchema());
  });

  afterEach(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it("leaves no task on a stale calendar version while puts and creates interleave", async () => {
    const services = stores.map(service);
    const now = T0;
    await services[0]!.calendars.put(LOCAL_ACTOR, "closures", { items: ["2031-01-01"] }, now);
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        services.map((s, replica) =>
          replica % 2 === 0
            ? s.create(LOCAL_ACTOR, task(round * REPLICAS + replica), now)
            : s.calendars.put(LOCAL_ACTOR, "closures", { items: [date(round, replica)] }, now),
        ),
      );
    }
    const [current] = await stores[0]!.calendars.findCalendars(LOCAL_ACTOR.owner, ["closures"]);
    const tasks = (await stores[0]!.tasks.listTasks(ALL, { limit: 200 })).items;
    expect(tasks).toHaveLength((ROUNDS * REPLICAS) / 2);
    for (const stored of tasks) {
      expect(calendarStamps(stored.schedule)).toEqual([
        { name: "closures", version: current?.version },
      ]);
    }
  });

  it("never deletes a calendar that a task created beside the delete names", async () => {
    const services = stores.map(service);
    const now = T0;
    for (let round = 0; round < ROUNDS; round++) {
      await services[0]!.calendars.put(LOCAL_ACTOR, "closures", { items: ["2031-01-01"] }, now);
      const outcomes = await Promise.allSettled([
        services[1]!.calendars.delete(LOCAL_ACTOR, "closures"),
        ...services.slice(2).map((s, i) => s.create(LOCAL_ACTOR, task(round * 10 + i), now)),
      ]);
      const deleted = outcomes[0];
      const created = outcomes.slice(1);
      const tasksIn = created.filter((o) => o.status === "fulfilled").length;
      if (deleted.status === "fulfilled") {
        // The calendar went first: every create was refused as naming a calendar that is not there.
        expect(tasksIn).toBe(0);
        for (const refusal of created) {
          expect(refusal.status === "rejected" && (refusal.reason as { code: string }).code).toBe(
            "validation_failed",
          );
        }
      } else {
        expect((deleted.reason as { code?: string }).code).toBe("calendar_in_use");
        expect(tasksIn).toBeGreaterThan(0);
      }
      // Clean up so the next round starts without users of the calendar.
      for (const stored of (await stores[0]!.tasks.listTasks(ALL, { limit: 200 })).items) {
        await services[0]!.delete(LOCAL_ACTOR, stored.id, { force: true }, now);
      }
    }
  });
});
