/**
 * The quotas under concurrency on PostgreSQL (docs/security.md#quotas), as a hostile owner would race
 * them through the API of two replicas on one schema: concurrent creates and batches never leave more
 * than `tasks_per_owner` tasks (the count is taken in the inserting transaction under a lock on the
 * owner), concurrent triggers on two replicas never pass `runs_per_minute` between them (counted in
 * the trigger's transaction, docs/decisions.md#runs-per-minute-across-replicas), concurrent backfills never
 * pass `backfill_runs_per_hour` on a replica, concurrent calendar puts never pass `calendars_per_owner`
 * or `calendar_items_per_owner` (counted in the put's transaction under a lock on the owner).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { call, startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/postgres-quota-race.test.ts");

const QUOTAS = {
  tasksPerOwner: 5,
  runsPerMinute: 5,
  backfillRunsPerHour: 10,
  calendarsPerOwner: 5,
  calendarItemsPerOwner: 12,
};

const hourly = (title: string) => ({
  title,
  schedule: { type: "cron", cron: "0 * * * *", timezone: "UTC" },
  target: { kind: "handler", name: "log" },
  options: { overlap: "allow_all" },
});

describe.skipIf(!runnable)("postgres: quotas raced by one owner", () => {
  let database: PostgresTestDatabase;
  const replicas: TestServer[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    const schema = database.freshSchema();
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startTestServer({
          store: postgres(database.url ?? "", { schema }),
          policy: { quotas: { ...QUOTAS, overrides: { bob: { tasksPerOwner: 100 } } } },
        }),
      );
    }
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await database.drop();
  });

  const count = async (token: string): Promise<number> => {
    const [first] = replicas;
    const page = await call(first?.url ?? "", "GET", "/v1/tasks?limit=200", { token });
    return (page.body as { items: unknown[] }).items.length;
  };

  it("leaves at most tasks_per_owner tasks after concurrent creates and batches", async () => {
    const [a, b] = replicas as [TestServer, TestServer];
    const alice = await a.token("alice");
    const creates = Array.from({ length: 20 }, (_, i) =>
      call((i % 2 === 0 ? a : b).url, "POST", "/v1/tasks", { token: alice, body: hourly(`t${i}`) }),
    );
    const answers = await Promise.all(creates);
    expect(answers.filter((r) => r.status === 201)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 422)).toHaveLength(15);
    expect(await count(alice)).toBe(5);

    const carol = await a.token("carol");
    const batches = Array.from({ length: 5 }, (_, i) =>
      call((i % 2 === 0 ? a : b).url, "POST", "/v1/tasks/batch", {
        token: carol,
        body: { tasks: Array.from({ length: 3 }, (_, j) => hourly(`b${i}-${j}`)) },
      }),
    );
    const batchAnswers = await Promise.all(batches);
    // 5 of quota: one batch of 3 fits, a second would make 6.
    expect(batchAnswers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(await count(carol)).toBe(3);
  });

  it("accepts at most runs_per_minute concurrent triggers across two replicas, and backfills within the hour's quota", async () => {
    const [a, b] = replicas as [TestServer, TestServer];
    const bob = await a.token("bob");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await call(a.url, "POST", "/v1/tasks", { token: bob, body: hourly(`r${i}`) });
      expect(created.status).toBe(201);
      ids.push((created.body as { task: { id: string } }).task.id);
    }
    // On both replicas: each counts what the other queued, in the trigger's transaction.
    const triggers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call((i % 2 === 0 ? a : b).url, "POST", `/v1/tasks/${ids[i % ids.length] ?? ""}/trigger`, {
          token: bob,
        }),
      ),
    );
    expect(triggers.filter((r) => r.status === 202)).toHaveLength(5);
    expect(triggers.filter((r) => r.status === 429)).toHaveLength(15);

    // Four backfills of 10 hours each, on four tasks (four row locks), on two replicas, against 10
    // an hour: the count is taken in each backfill's transaction under a lock on the owner.
    const backfills = await Promise.all(
      ids.map((id, i) =>
        call((i % 2 === 0 ? a : b).url, "POST", `/v1/tasks/${id}/backfill`, {
          token: bob,
          body: { from: "2026-01-01T00:00:00Z", to: "2026-01-01T10:00:00Z" },
        }),
      ),
    );
    const made = backfills
      .filter((r) => r.status === 202)
      .reduce((sum, r) => sum + (r.body as { runs: unknown[] }).runs.length, 0);
    expect(backfills.filter((r) => r.status === 429)).toHaveLength(3);
    expect(made).toBe(10);
  });

  it("leaves at most calendars_per_owner calendars, and calendar_items_per_owner items, after concurrent puts", async () => {
    const [a, b] = replicas as [TestServer, TestServer];
    const dave = await a.token("dave");
    const puts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call((i % 2 === 0 ? a : b).url, "PUT", `/v1/calendars/c${i}`, {
          token: dave,
          body: { items: ["2031-01-01"] },
        }),
      ),
    );
    expect(puts.filter((r) => r.status === 201)).toHaveLength(5);
    expect(puts.filter((r) => r.status === 422)).toHaveLength(15);
    const listed = await call(a.url, "GET", "/v1/calendars?limit=200", { token: dave });
    expect((listed.body as { items: unknown[] }).items).toHaveLength(5);

    const erin = await a.token("erin");
    const items = ["2031-01-01", "2031-01-02", "2031-01-03"];
    const bigger = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        call((i % 2 === 0 ? a : b).url, "PUT", `/v1/calendars/d${i}`, {
          token: erin,
          body: { items },
        }),
      ),
    );
    // 12 items of quota: four calendars of 3.
    expect(bigger.filter((r) => r.status === 201)).toHaveLength(4);
    expect(bigger.filter((r) => r.status === 422)[0]?.body).toMatchObject({
      limit: "calendar_items_per_owner",
    });
  });
});
