/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * The quotas over HTTP (docs/security.md#quotas): a count or period over its quota answers 422
 * `limit_exceeded` naming it, a rate answers 429 `quota_exceeded` with `Retry-After`; an override lifts
 * one owner's quota only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await startTestServer({
    policy: {
      quotas: {
        tasksPerOwner: 1,
        runsPerMinute: 1,
        backfillRunsPerHour: 2,
        calendarsPerOwner: 2,
        calendarItemsPerOwner: 3,
        overrides: { bob: { tasksPerOwner: 5 } },
      },
    },
  });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await t.stop();
});

const HOURLY = {
  title: "hourly",
  schedule: { type: "cron", cron: "0 * * * *", timezone: "UTC" },
  target: { kind: "handler", name: "log" },
  options: { overlap: "allow_all" },
};

describe("quotas over HTTP", () => {
  it("answers 422 naming tasks_per_owner, and 429 with Retry-After for a rate", async () => {
    const first = await call(t.url, "POST", "/v1/tasks", { token: alice, body: HOURLY });
    expect(first.status).toBe(201);
    const second = await call(t.url, "POST", "/v1/tasks", { token: alice, body: HOURLY });
    expect(second.status).toBe(422);
    expect(second.body).toMatchObject({
      limit: "tasks_per_owner",
      max: 1,
      detail: "tasks_per_owner: 1 allowed, 1 used, 1 more asked",
    });
    // Bob's override lets him have more.
    for (let i = 0; i < 2; i++) {
      expect((await call(t.url, "POST", "/v1/tasks", { token: bob, body: HOURLY })).status).toBe(
        201,
      );
    }

    const id: string = first.body.task.id;
    const run = await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token: alice });
    expect(run.status).toBe(202);
    const again = await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token: alice });
    expect(again.status).toBe(429);
    expect(again.body).toMatchObject({
      type: "https://punctual.dev/problems/quota_exceeded",
      limit: "runs_per_minute",
      max: 1,
      detail: "runs_per_minute: 1 allowed, 1 used, 1 more asked (in the last minute)",
    });
    expect(again.headers.get("retry-after")).toBe("60");

    const backfill = await call(t.url, "POST", `/v1/tasks/${id}/backfill`, {
      token: alice,
      body: { from: "2026-01-01T00:00:00Z", to: "2026-01-01T05:00:00Z" },
    });
    expect(backfill.status).toBe(429);
    expect(backfill.body).toMatchObject({
      limit: "backfill_runs_per_hour",
      max: 2,
      detail: "backfill_runs_per_hour: 2 allowed, 0 used, 5 more asked (in the last hour)",
    });
    expect(backfill.headers.get("retry-after")).toBe("3600");
  });

  it("answers 422 naming calendars_per_owner and calendar_items_per_owner, with the range", async () => {
    const put = (name: string, items: string[], token = alice) =>
      call(t.url, "PUT", `/v1/calendars/${name}`, { token, body: { items } });
    expect((await put("one", ["2030-01-01", "2030-01-02"])).status).toBe(201);
    const tooMany = await put("two", ["2030-01-03", "2030-01-04"]);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toMatchObject({
      type: "https://punctual.dev/problems/limit_exceeded",
      limit: "calendar_items_per_owner",
      max: 3,
      detail: "calendar_items_per_owner: 3 allowed, 2 used, 2 more asked",
    });
    expect((await put("two", ["2030-01-03"])).status).toBe(201);
    const third = await put("three", []);
    expect(third.status).toBe(422);
    expect(third.body).toMatchObject({
      limit: "calendars_per_owner",
      max: 2,
      detail: "calendars_per_owner: 2 allowed, 2 used, 1 more asked",
    });
    // Replacing a calendar adds none, and one that does not grow is never refused.
    expect((await put("one", ["2030-01-05"])).status).toBe(200);
    expect((await put("two", ["2030-01-06", "2030-01-07"])).status).toBe(200);
    // Other owners have their own.
    expect((await put("three", [], bob)).status).toBe(201);
  });
});
