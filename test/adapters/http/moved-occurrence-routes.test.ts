/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * `on_excluded` over HTTP (issue 34, docs/schedules.md#moved-occurrences), against a real server on
 * port 0: a task whose occurrence falls on an excluded date fires the date before, the task keeps the
 * option, its preview says where the fire came from, and a value outside skip/previous/next is a 422
 * naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  previewSchema,
  taskViewSchema as taskSchema,
} from "../../../src/application/shapes/view-schemas.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(t.url, method, path, options);

const DAY = 86_400_000;
/** `YYYY-MM-DD` (UTC) `n` days from today. */
const day = (n: number): string => new Date(Date.now() + n * DAY).toISOString().slice(0, 10);

/** Noon UTC on the date ten days from now, once a year, that date excluded. */
function payday(onExcluded: unknown) {
  const [, month, dom] = day(10).split("-").map(Number) as [number, number, number];
  return {
    title: "payroll",
    schedule: {
      type: "cron",
      cron: `0 12 ${dom} ${month} *`,
      timezone: "UTC",
      exclude: [day(10)],
      on_excluded: onExcluded,
    },
    target: { kind: "handler", name: "log" },
  };
}

describe("on_excluded over HTTP", () => {
  it("moves an excluded occurrence to the date before and says where it came from", async () => {
    const created = await api("POST", "/v1/tasks", { token: alice, body: payday("previous") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = taskSchema.parse(created.body.task);
    expect(task.schedule).toMatchObject({ on_excluded: "previous" });
    expect(task.next_run_at).toBe(`${day(9)}T12:00:00Z`);

    const preview = await api("GET", `/v1/tasks/${task.id}/preview?count=1`, { token: alice });
    const [first] = previewSchema.parse(preview.body).occurrences;
    expect(first).toMatchObject({
      at: `${day(9)}T12:00:00Z`,
      moved_from: { kind: "excluded", at: `${day(10)}T12:00:00Z`, exclusion: { item: day(10) } },
    });
  });

  it("skips it by default and with on_excluded skip", async () => {
    for (const onExcluded of [undefined, "skip"]) {
      const created = await api("POST", "/v1/tasks", { token: alice, body: payday(onExcluded) });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const task = taskSchema.parse(created.body.task);
      expect(task.schedule).not.toHaveProperty("on_excluded");
      expect(task.next_run_at?.startsWith(day(9))).toBe(false);
    }
  });

  it("refuses a value other than skip, previous or next, naming the field", async () => {
    const refused = await api("POST", "/v1/tasks", { token: alice, body: payday("before") });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("schedule.on_excluded");
  });
});
