/**
 * Upsert by key raced on one PostgreSQL schema from several replicas, each with its own pool
 * (docs/semantics.md#upsert): every replica upserts the same keys at the same instant, and each key
 * ends with exactly one task, created by one replica and found identical by the others; then every
 * replica upserts a changed definition at once, and each key still has one task, its last version
 * holding that definition.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { TaskService } from "../../src/application/tasks/task-service.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import { ALL, T0 } from "../contract/fixtures.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const REPLICAS = 4;
const KEYS = 25;
const runnable = await raceTestsRunnable("test/race/postgres-upsert-race.test.ts");

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

const definition = (i: number, hour: number) => ({
  key: `declared:${i}`,
  title: `declared ${i}`,
  schedule: { type: "cron", cron: `${i} ${hour} * * *`, timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "log" },
});

describe.skipIf(!runnable)(`postgres: upsert raced from ${REPLICAS} replicas`, () => {
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

  it("ends with one task per key, created once, however the upserts interleave", async () => {
    const services = stores.map(service);
    const upsertAll = (hour: number) =>
      Promise.all(
        services.map((s) =>
          Promise.all(
            Array.from({ length: KEYS }, (_, i) =>
              s.upsert(LOCAL_ACTOR, definition(i, hour), null, T0),
            ),
          ),
        ),
      );
    const first = await upsertAll(9);
    for (let i = 0; i < KEYS; i++) {
      const answers = first.map((replica) => replica[i]!);
      expect(answers.filter((answer) => answer.created)).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.task.id)).size).toBe(1);
      expect(answers.every((answer) => answer.task.version === 1)).toBe(true);
    }
    await upsertAll(10);
    const page = await stores[0]!.tasks.listTasks(ALL, { limit: 200 });
    expect(page.items).toHaveLength(KEYS);
    for (const task of page.items) {
      // One replica changed it (version 2); the others found it already changed.
      expect(task.version).toBe(2);
      expect(task.schedule.type === "cron" && task.schedule.rules[0]?.text).toMatch(
        / 10 \* \* \*$/,
      );
    }
  });
});
