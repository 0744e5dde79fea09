/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- API answers are untyped JSON, checked by the assertions */
/**
 * `/v1/calendars/{name}` against a real server on port 0 (issue 22): create a calendar, use it in a
 * task's `exclude`, edit it (the task's next fire follows), the refused delete (409 naming the task),
 * owner isolation, validation, and the previews and explain that name the calendar.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  calendarListSchema,
  calendarPutResultSchema,
  calendarViewSchema as calendarSchema,
  explanationViewSchema as explanationSchema,
  previewSchema,
  taskViewSchema as taskSchema,
} from "../../../src/application/shapes/view-schemas.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob] = await Promise.all([t.token("alice"), t.token("bob")]);
});
afterAll(async () => {
  await t.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(t.url, method, path, options);

const DAY = 86_400_000;
/** `YYYY-MM-DD` (UTC) `n` days from today, and the instant of its midnight. */
const day = (n: number): string => new Date(Date.now() + n * DAY).toISOString().slice(0, 10);
const midnight = (n: number): string => `${day(n)}T00:00:00Z`;

const MIDNIGHT_TASK = (exclude: unknown[]) => ({
  title: "nightly",
  schedule: { type: "cron", cron: "0 0 * * *", timezone: "UTC", exclude },
  target: { kind: "handler", name: "log" },
});

describe("calendars over HTTP", () => {
  it("creates, uses, edits and refuses to delete a calendar in use", async () => {
    const created = await api("PUT", "/v1/calendars/holidays", {
      token: alice,
      body: { items: [day(1)] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(calendarPutResultSchema.parse(created.body)).toMatchObject({
      name: "holidays",
      items: [day(1)],
      version: 1,
      tasks_refreshed: 0,
    });

    const task = await api("POST", "/v1/tasks", {
      token: alice,
      body: MIDNIGHT_TASK(["2099-01-01", { calendar: "holidays" }]),
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const view = taskSchema.parse(task.body.task);
    expect(view.schedule).toEqual({
      type: "cron",
      cron: "0 0 * * *",
      timezone: "UTC",
      exclude: ["2099-01-01", { calendar: "holidays" }],
    });
    expect(view.next_run_at).toBe(midnight(2));

    const preview = await api("GET", `/v1/tasks/${view.id}/preview?count=1`, { token: alice });
    const [first] = previewSchema.parse(preview.body).occurrences;
    expect(first?.at).toBe(midnight(2));
    expect(first?.suppressed_before).toEqual([
      {
        kind: "excluded",
        at: midnight(1),
        wall: `${day(1)}T00:00:00`,
        exclusion: { item: day(1), calendar: "holidays" },
      },
    ]);

    const explain = await api("GET", `/v1/tasks/${view.id}/explain?at=${midnight(1)}`, {
      token: alice,
    });
    expect(explanationSchema.parse(explain.body)).toMatchObject({
      verdict: "excluded",
      exclusion: { item: day(1), calendar: "holidays" },
    });

    const edited = await api("PUT", "/v1/calendars/holidays", {
      token: alice,
      body: { items: [{ from: day(2), to: day(3) }] },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ version: 2, tasks_refreshed: 1 });
    const reread = await api("GET", `/v1/tasks/${view.id}`, { token: alice });
    expect(reread.body.next_run_at).toBe(midnight(1));
    expect(reread.body.version).toBe(view.version);

    const refused = await api("DELETE", "/v1/calendars/holidays", { token: alice });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      type: "https://punctual.dev/problems/calendar_in_use",
      task_id: view.id,
    });
    expect(refused.body.detail).toContain(view.id);

    await api("DELETE", `/v1/tasks/${view.id}`, { token: alice });
    expect((await api("DELETE", "/v1/calendars/holidays", { token: alice })).status).toBe(204);
    expect((await api("GET", "/v1/calendars/holidays", { token: alice })).status).toBe(404);
  });

  it("reads and lists calendars per owner; another owner's is not found", async () => {
    await api("PUT", "/v1/calendars/audits", {
      token: alice,
      body: { items: [{ days: "L * *" }] },
    });
    await api("PUT", "/v1/calendars/bridges", { token: alice, body: { items: [day(9)] } });
    const read = await api("GET", "/v1/calendars/audits", { token: alice });
    expect(calendarSchema.parse(read.body)).toMatchObject({ items: [{ days: "L * *" }] });
    const list = await api("GET", "/v1/calendars", { token: alice });
    expect(calendarListSchema.parse(list.body).items.map((c) => c.name)).toEqual([
      "audits",
      "bridges",
    ]);
    expect((await api("GET", "/v1/calendars/audits", { token: bob })).status).toBe(404);
    expect((await api("GET", "/v1/calendars", { token: bob })).body.items).toEqual([]);
    expect((await api("DELETE", "/v1/calendars/audits", { token: bob })).status).toBe(404);
    const bobTask = await api("POST", "/v1/tasks", {
      token: bob,
      body: MIDNIGHT_TASK([{ calendar: "audits" }]),
    });
    expect(bobTask.status).toBe(422);
    expect(bobTask.body.errors).toEqual([
      { field: "schedule.exclude.0.calendar", message: 'no calendar named "audits"' },
    ]);
  });

  it("changes nothing when the same items are put again", async () => {
    await api("PUT", "/v1/calendars/same", { token: alice, body: { items: [day(5)] } });
    const again = await api("PUT", "/v1/calendars/same", {
      token: alice,
      body: { items: [day(5)] },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ version: 1, tasks_refreshed: 0 });
  });

  it("refuses invalid items and names, naming each field", async () => {
    const bad = await api("PUT", "/v1/calendars/holidays", {
      token: alice,
      body: { items: ["2030-02-30", { days: "* *" }, { calendar: "other" }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "items.0",
      "items.1.days",
      "items.2",
    ]);
    const name = await api("PUT", "/v1/calendars/.hidden", { token: alice, body: { items: [] } });
    expect(name.status).toBe(422);
    expect(name.body.errors[0].field).toBe("name");
    const shape = await api("PUT", "/v1/calendars/holidays", { token: alice, body: [day(1)] });
    expect(shape.status).toBe(422);
  });

  it("previews a schedule not saved yet with the caller's calendars", async () => {
    await api("PUT", "/v1/calendars/preview-days", { token: alice, body: { items: [day(1)] } });
    const answer = await api("POST", "/v1/schedules/preview?count=1", {
      token: alice,
      body: {
        schedule: {
          type: "cron",
          cron: ["0 0 * * *", "0 12 * * *"],
          exclude: [{ calendar: "preview-days" }],
        },
      },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [next] = answer.body.occurrences;
    expect(new Date(next.at).getTime()).toBeLessThanOrEqual(Date.parse(midnight(2)) + DAY / 2);
    expect(["0 0 * * *", "0 12 * * *"]).toContain(next.rule);
    const bobAnswer = await api("POST", "/v1/schedules/preview", {
      token: bob,
      body: {
        schedule: { type: "cron", cron: "0 0 * * *", exclude: [{ calendar: "preview-days" }] },
      },
    });
    expect(bobAnswer.status).toBe(422);
  });

  it("answers 401 without a token and 405 for a method the path does not take", async () => {
    expect((await api("GET", "/v1/calendars")).status).toBe(401);
    expect((await api("PUT", "/v1/calendars/x", { body: { items: [] } })).status).toBe(401);
    const post = await api("POST", "/v1/calendars/x", { token: alice, body: { items: [] } });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, PUT, DELETE");
  });

  it("adds a region's public holidays to a put's items, and refuses an unknown region (docs/schedules.md#holidays)", async () => {
    const put = await api("PUT", "/v1/calendars/de-by", {
      token: alice,
      body: {
        items: ["2027-12-24"],
        holidays: { region: "DE-BY", from_year: 2027, to_year: 2028 },
      },
    });
    expect(put.status).toBe(201);
    const calendar = calendarPutResultSchema.parse(put.body);
    expect(calendar.items).toContain("2027-12-24");
    expect(calendar.items).toContain("2027-01-06");
    expect(calendar.items).toContain("2028-06-15"); // Corpus Christi 2028
    expect(calendar.items).not.toContain("2029-01-01");

    const unknown = await api("PUT", "/v1/calendars/nowhere", {
      token: alice,
      body: { items: [], holidays: { region: "XX-YY" } },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([
      { field: "holidays.region", message: 'no public holidays are known for the country "XX"' },
    ]);
  }, 30_000);
});
