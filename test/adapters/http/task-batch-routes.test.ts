/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- API answers are untyped JSON, checked by the assertions */
/**
 * `POST /v1/tasks/batch` (docs/api.md): all or none, refusals named by item index (from the schema and
 * from the service alike), the answer in input order, and `Idempotency-Key` replaying the first answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

const titled = (title: string) => ({ ...CRON_TASK, title });

async function taskTitles(): Promise<string[]> {
  const page = await call(t.url, "GET", "/v1/tasks?limit=200", { token });
  return (page.body.items as { title: string }[]).map((task) => task.title);
}

describe("POST /v1/tasks/batch", () => {
  it("creates every task and answers them in input order", async () => {
    const titles = Array.from({ length: 50 }, (_, i) => `batch ${String(i)}`);
    const answer = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: { tasks: titles.map(titled) },
    });
    expect(answer.status).toBe(201);
    const created = answer.body.tasks as { task: { id: string; title: string }; warnings: [] }[];
    expect(created.map((c) => c.task.title)).toEqual(titles);
    const read = await call(t.url, "GET", `/v1/tasks/${created[7]?.task.id ?? ""}`, { token });
    expect(read.body).toEqual(created[7]?.task);
  });

  it("refuses the whole batch naming each bad item, from the schema or from parsing", async () => {
    const before = await taskTitles();
    const shape = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: { tasks: [titled("ok"), { ...CRON_TASK, title: 42 }, { ...CRON_TASK, colour: "red" }] },
    });
    expect(shape.status).toBe(422);
    expect(shape.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "tasks[1].title",
      "tasks[2]",
    ]);
    const parse = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: {
        tasks: [
          ...Array.from({ length: 17 }, (_, i) => titled(`fine ${String(i)}`)),
          { ...CRON_TASK, schedule: { type: "cron", cron: "61 * * * *" } },
        ],
      },
    });
    expect(parse.status).toBe(422);
    expect(parse.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "tasks[17].schedule.cron",
    ]);
    expect(await taskTitles()).toEqual(before);
  });

  it("refuses more than 1,000 tasks and a body without a list", async () => {
    const many = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: { tasks: Array.from({ length: 1001 }, () => titled("x")) },
    });
    expect(many.status).toBe(422);
    expect(many.body).toMatchObject({ limit: "batch_size", max: 1000 });
    const bare = await call(t.url, "POST", "/v1/tasks/batch", { token, body: [titled("x")] });
    expect(bare.status).toBe(422);
  });

  it("replays the first answer for a repeated Idempotency-Key and refuses another body", async () => {
    const headers = { "idempotency-key": "batch-once" };
    const body = { tasks: [titled("idem a"), titled("idem b")] };
    const first = await call(t.url, "POST", "/v1/tasks/batch", { token, body, headers });
    const again = await call(t.url, "POST", "/v1/tasks/batch", { token, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await taskTitles()).filter((title) => title.startsWith("idem"))).toEqual([
      "idem a",
      "idem b",
    ]);
    const other = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: { tasks: [titled("idem c")] },
      headers,
    });
    expect(other.status).toBe(422);
  });

  it("names the item a limit refuses (run_timeout, min_period), writing nothing", async () => {
    const before = await taskTitles();
    const timeout = await call(t.url, "POST", "/v1/tasks/batch", {
      token,
      body: { tasks: [titled("fine"), { ...titled("long"), options: { run_timeout: "P2D" } }] },
    });
    expect(timeout.status).toBe(422);
    expect(timeout.body).toMatchObject({ limit: "run_timeout", max: 86400 });
    expect(timeout.body.detail).toMatch(/^tasks\[1\]: /);
    const strict = await startTestServer({ policy: { quotas: { minPeriodMs: 60_000 } } });
    try {
      const often = await call(strict.url, "POST", "/v1/tasks/batch", {
        token: await strict.token("alice"),
        body: {
          tasks: [
            titled("fine"),
            titled("fine too"),
            { ...titled("often"), schedule: { type: "interval", every: "PT5S" } },
          ],
        },
      });
      expect(often.status).toBe(422);
      expect(often.body).toMatchObject({ limit: "min_period", max: 60_000 });
      expect(often.body.detail).toMatch(/^tasks\[2\]: /);
    } finally {
      await strict.stop();
    }
    expect(await taskTitles()).toEqual(before);
  });

  it("needs a token", async () => {
    const answer = await call(t.url, "POST", "/v1/tasks/batch", { body: { tasks: [] } });
    expect(answer.status).toBe(401);
  });
});
