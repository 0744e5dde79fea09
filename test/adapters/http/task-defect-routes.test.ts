/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * A task whose stored row no longer parses, through the HTTP API on a real SQLite file corrupted behind
 * the server's back (docs/operations.md#a-task-that-does-not-parse): GET and the listing show its
 * `defect`, other tasks answer as usual, a command that needs the broken field answers 409
 * task_defective, a PATCH that does not give it anew 422, one that does repairs it, and DELETE works.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../../src/adapters/storage/sqlite/sqlite.js";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

const directory = mkdtempSync(join(tmpdir(), "punctual-defect-http-"));
const path = join(directory, "punctual.db");
let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer({ store: sqlite(path) });
  token = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
  rmSync(directory, { recursive: true, force: true });
});

function corrupt(id: string, column: string, raw: string): void {
  const db = new Database(path);
  try {
    db.prepare(`UPDATE tasks SET ${column} = ? WHERE id = ?`).run(raw, id);
  } finally {
    db.close();
  }
}

async function createTask(title: string): Promise<string> {
  const created = await call(t.url, "POST", "/v1/tasks", { token, body: { ...CRON_TASK, title } });
  expect(created.status).toBe(201);
  return created.body.task.id as string;
}

describe("a task whose stored fields no longer parse", () => {
  it("is shown with its defect by GET and the listing, beside sound tasks", async () => {
    const sound = await createTask("sound");
    const broken = await createTask("broken");
    corrupt(broken, "options", '{"overlap":"sometimes"}');
    const read = await call(t.url, "GET", `/v1/tasks/${broken}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.defect).toEqual({
      detected_at: null,
      fields: [{ field: "options", message: expect.stringMatching(/^overlap: /) }],
    });
    expect(read.body.title).toBe("broken");
    const list = await call(t.url, "GET", "/v1/tasks?limit=200", { token });
    expect(list.status).toBe(200);
    const items = list.body.items as { id: string; defect: unknown }[];
    const shown = new Map(items.map((item) => [item.id, item.defect]));
    expect(shown.get(sound)).toBeNull();
    expect(shown.get(broken)).toMatchObject({ fields: [{ field: "options" }] });
    expect((await call(t.url, "GET", `/v1/tasks/${sound}`, { token })).body.defect).toBeNull();
  });

  it("refuses a command that needs the broken field (409 task_defective)", async () => {
    const broken = await createTask("refused");
    corrupt(broken, "target", '{"kind":"carrier-pigeon"}');
    const trigger = await call(t.url, "POST", `/v1/tasks/${broken}/trigger`, { token });
    expect(trigger.status).toBe(409);
    expect(trigger.body.type).toBe("https://punctual.dev/problems/task_defective");
    expect(trigger.body.detail).toMatch(/target/);
    const pause = await call(t.url, "POST", `/v1/tasks/${broken}/pause`, { token });
    expect(pause.status).toBe(409);
  });

  it("is repaired by a PATCH that gives the broken field anew, and only by such a PATCH", async () => {
    const broken = await createTask("repaired");
    corrupt(broken, "schedule", '{"type":"cron","rules":"daily"}');
    const current = await call(t.url, "GET", `/v1/tasks/${broken}`, { token });
    const version = String(current.body.version);
    const beside = await call(t.url, "PATCH", `/v1/tasks/${broken}`, {
      token,
      headers: { "if-match": version },
      body: { title: "renamed" },
    });
    expect(beside.status).toBe(422);
    expect(beside.body.errors).toEqual([{ field: "schedule", message: expect.any(String) }]);
    const fixed = await call(t.url, "PATCH", `/v1/tasks/${broken}`, {
      token,
      headers: { "if-match": version },
      body: { schedule: { type: "cron", cron: "0 9 * * *", timezone: "Europe/Berlin" } },
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.task.defect).toBeNull();
    expect(fixed.body.task.schedule).toMatchObject({
      cron: "0 9 * * *",
      timezone: "Europe/Berlin",
    });
    const again = await call(t.url, "GET", `/v1/tasks/${broken}`, { token });
    expect(again.body.defect).toBeNull();
  });

  it("is deleted like any task", async () => {
    const broken = await createTask("deleted");
    corrupt(broken, "context", '{"mode":"telepathy"}');
    const deleted = await call(t.url, "DELETE", `/v1/tasks/${broken}`, { token });
    expect(deleted.status).toBe(204);
    expect((await call(t.url, "GET", `/v1/tasks/${broken}`, { token })).status).toBe(404);
  });
});
