/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * Text no store keeps (U+0000, lone surrogates) is refused before any store sees it
 * (docs/security.md#bounded-input): PostgreSQL refused it in a task's input or a `/complete` result with
 * a store error (500). Every store now answers the same 422 naming the field, and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callbackToken } from "../../../src/adapters/callbacks/callback-tokens.js";
import { memoryStore } from "../../../src/adapters/storage/memory/memory-store.js";
import { sqlite } from "../../../src/adapters/storage/sqlite/sqlite-store.js";
import type { StoreFactory } from "../../../src/domain/ports/store.js";
import { createPostgresTestDatabase } from "../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../helpers/postgres.js";
import { call, CRON_TASK, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let database: PostgresTestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const STORES: readonly [string, () => StoreFactory][] = [
  ["memory", () => memoryStore()],
  ["sqlite", () => sqlite(":memory:")],
  ["postgres", () => ({ open: () => database.openStore({ ownPool: true }) })],
];

describe.each(STORES)("on %s", (_name, factory) => {
  let t: TestServer;
  let alice: string;
  beforeAll(async () => {
    t = await startTestServer({ store: factory() });
    alice = await t.token("alice");
  });
  afterAll(async () => {
    await t.stop();
  });

  it.each([
    ["a NUL in target.input", { input: { note: "nul \u0000 here" } }, "target.input.note"],
    ["a lone surrogate in a key", { input: { ["k\ud800"]: 1 } }, "target.input.k\ud800"],
    ["a NUL deep in an array", { input: [[["\u0000"]]] }, "target.input[0][0][0]"],
  ])("refuses %s with 422 naming the field", async (_what, target, field) => {
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, target: { kind: "handler", name: "log", ...target } },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.errors).toEqual([{ field, message: expect.stringMatching(/U\+0000/) }]);
  });

  it("refuses a metadata value holding NUL", async () => {
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, metadata: { team: "da\u0000ta" } },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
  });

  it("refuses a /complete result or error holding NUL with 422", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, target: { kind: "webhook", url: "https://hooks.example/job" } },
    });
    const secret: string = created.body.task.webhook_secret;
    const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
      token: alice,
    });
    const runId: string = run.body.id;
    const path = `/v1/runs/${runId}/complete?token=${callbackToken(secret, "complete", runId)}`;
    for (const body of [
      { status: "succeeded", result: { out: "a\u0000b" } },
      { status: "failed", error: "bo\u0000om" },
    ]) {
      const answer = await call(t.url, "POST", path, { body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    }
  });
});
