/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- API answers are untyped JSON, checked by the assertions */
/**
 * `POST /v1/schedules/preview`: the next fires of a schedule no task has yet, parsed as task creation
 * parses it (the dashboard's live preview).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
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

const preview = (body: unknown, query = "", auth = true) =>
  call(t.url, "POST", `/v1/schedules/preview${query}`, { body, ...(auth ? { token } : {}) });

describe("POST /v1/schedules/preview", () => {
  it("answers the next fires with local wall times, as a task's preview does", async () => {
    const answer = await preview(
      { schedule: { type: "cron", cron: "0 9 * * *", timezone: "Europe/Paris" } },
      "?count=3",
    );
    expect(answer.status).toBe(200);
    expect(answer.body.occurrences).toHaveLength(3);
    for (const fire of answer.body.occurrences) {
      expect(fire.wall).toMatch(/T09:00:00$/);
      expect(["+01:00", "+02:00"]).toContain(fire.offset);
    }
  });

  it("marks a fire DST moved (a fixed time inside the spring gap)", async () => {
    const answer = await preview(
      {
        schedule: {
          type: "cron",
          cron: "30 2 * * *",
          timezone: "Europe/Berlin",
          start_at: "2099-03-25T00:00:00Z",
        },
      },
      "?count=10",
    );
    expect(answer.status).toBe(200);
    const shifted = answer.body.occurrences.filter(
      (o: { note: { kind: string } | null }) => o.note?.kind === "gap_shifted",
    );
    expect(shifted).toHaveLength(1);
    expect(shifted[0]).toMatchObject({ wall: "2099-03-29T03:00:00", offset: "+02:00" });
  });

  it("answers 10 fires by default, and an interval's from now", async () => {
    const answer = await preview({ schedule: { type: "interval", every: "PT15M" } });
    expect(answer.status).toBe(200);
    expect(answer.body.occurrences).toHaveLength(10);
  });

  it("refuses a bad schedule with the validation problem naming the field, as create does", async () => {
    const answer = await preview({ schedule: { type: "cron", cron: "61 * * * *" } });
    expect(answer.status).toBe(422);
    expect(answer.body.type).toBe("https://punctual.dev/problems/validation_failed");
    expect(answer.body.errors[0].field).toBe("schedule.cron");
    const created = await call(t.url, "POST", "/v1/tasks", {
      token,
      body: {
        title: "x",
        schedule: { type: "cron", cron: "61 * * * *" },
        target: { kind: "handler", name: "log" },
      },
    });
    expect(created.body.errors).toEqual(answer.body.errors);
  });

  it("refuses unknown body fields, a bad zone and an out-of-range count", async () => {
    expect((await preview({ schedule: { type: "cron", cron: "* * * * *" }, x: 1 })).status).toBe(
      422,
    );
    const zone = await preview({
      schedule: { type: "cron", cron: "* * * * *", timezone: "+05:30" },
    });
    expect(zone.body.errors[0].field).toBe("schedule.timezone");
    const count = await preview({ schedule: { type: "cron", cron: "* * * * *" } }, "?count=101");
    expect(count.status).toBe(422);
    expect(count.body.errors[0].field).toBe("count");
  });

  it("answers 401 without a token", async () => {
    const answer = await preview({ schedule: { type: "cron", cron: "* * * * *" } }, "", false);
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("writes nothing", async () => {
    await preview({ schedule: { type: "cron", cron: "* * * * *" } });
    const list = await call(t.url, "GET", "/v1/tasks", { token });
    expect(list.body.items).toEqual([]);
  });
});
