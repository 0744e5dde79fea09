/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * What a hostile owner or stranger sends the HTTP API (docs/security.md): text that would deceive a
 * reader, documents nested to overflow a parser or the store, other media types on `/complete`. Each
 * answers a 4xx naming what was refused, never a 500, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callbackToken } from "../../../src/adapters/callbacks/callback-tokens.js";
import { call, CRON_TASK, startTestServer } from "./http-harness.js";
import type { Answer, TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

function expectProblem(answer: Answer, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.type).toBe(`https://punctual.dev/problems/${code}`);
}

/** `depth` nested arrays around `inner`, as JSON text (built without recursion). */
function nestedText(depth: number, inner = "1"): string {
  return `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
}

async function taskCount(): Promise<number> {
  const listed = await call(t.url, "GET", "/v1/tasks?limit=200", { token: alice });
  return (listed.body.items as unknown[]).length;
}

describe("titles and descriptions", () => {
  it.each([
    ["NUL", "a\u0000b"],
    ["a bidi override", "invoice\u202egnp.exe"],
    ["an isolate", "a\u2066b"],
    ["ESC", "\u001b[2Jcleared"],
    ["a newline", "two\nlines"],
  ])("refuses a title holding %s (422, nothing written)", async (_what, title) => {
    const before = await taskCount();
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, title },
    });
    expectProblem(answer, 422, "validation_failed");
    expect(answer.body.errors).toEqual([{ field: "title", message: expect.any(String) }]);
    expect(await taskCount()).toBe(before);
  });

  it("refuses a lone surrogate sent as a JSON escape (it would read back as U+FFFD)", async () => {
    const raw = JSON.stringify({ ...CRON_TASK, title: "x" }).replace('"x"', '"x\\ud800"');
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      raw,
      headers: { "content-type": "application/json" },
    });
    expectProblem(answer, 422, "validation_failed");
    expect(answer.body.errors[0].message).toMatch(/surrogate/);
  });

  it("takes newlines and tabs in a description, not control characters or overrides", async () => {
    const ok = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: { ...CRON_TASK, description: "line one\n\tline two\r\n" },
    });
    expect(ok.status).toBe(201);
    const id: string = ok.body.task.id;
    for (const description of ["bell\u0007", "rlo\u202e"]) {
      const edit = await call(t.url, "PATCH", `/v1/tasks/${id}`, {
        token: alice,
        body: { description },
        headers: { "if-match": `"${ok.body.task.version}"` },
      });
      expectProblem(edit, 422, "validation_failed");
      expect(edit.body.errors).toEqual([{ field: "description", message: expect.any(String) }]);
    }
  });
});

describe("nested documents", () => {
  it.each([65, 1_001, 10_000, 100_000])(
    "refuses a target.input %i deep with 422 json_depth, before parsing",
    async (depth) => {
      const before = await taskCount();
      const raw = JSON.stringify({
        ...CRON_TASK,
        target: { kind: "handler", name: "log", input: "HOLE" },
      }).replace('"HOLE"', nestedText(depth));
      const answer = await call(t.url, "POST", "/v1/tasks", {
        token: alice,
        raw,
        headers: { "content-type": "application/json" },
      });
      expectProblem(answer, 422, "limit_exceeded");
      expect(answer.body).toMatchObject({ limit: "json_depth", max: 64 });
      expect(await taskCount()).toBe(before);
    },
  );

  it("takes a target.input 60 deep", async () => {
    const raw = JSON.stringify({
      ...CRON_TASK,
      target: { kind: "handler", name: "log", input: "HOLE" },
    }).replace('"HOLE"', nestedText(60));
    const answer = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      raw,
      headers: { "content-type": "application/json" },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  });

  it("refuses a batch whose bodies nest too deep, and a /complete result 100,000 deep", async () => {
    const batch = JSON.stringify({
      tasks: [{ ...CRON_TASK, target: { kind: "handler", name: "log", input: "HOLE" } }],
    }).replace('"HOLE"', nestedText(5_000));
    expectProblem(
      await call(t.url, "POST", "/v1/tasks/batch", {
        token: alice,
        raw: batch,
        headers: { "content-type": "application/json" },
      }),
      422,
      "limit_exceeded",
    );
    const complete = await call(t.url, "POST", "/v1/runs/run_x/complete?token=abc", {
      raw: `{"status":"succeeded","result":${nestedText(100_000)}}`,
      headers: { "content-type": "application/json" },
    });
    expect(complete.status).toBeGreaterThanOrEqual(400);
    expect(complete.status).toBeLessThan(500);
  });
});

describe("/complete media type and /docs headers", () => {
  it("answers 415 to a /complete posted as text/plain or a form, even with the right token", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", {
      token: alice,
      body: {
        ...CRON_TASK,
        target: { kind: "webhook", url: "https://hooks.example/job" },
      },
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.task.webhook_secret;
    const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
      token: alice,
    });
    const runId: string = run.body.id;
    const path = `/v1/runs/${runId}/complete?token=${callbackToken(secret, "complete", runId)}`;
    const verdict = JSON.stringify({ status: "succeeded" });
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded"]) {
      expectProblem(
        await call(t.url, "POST", path, { raw: verdict, headers: { "content-type": contentType } }),
        415,
        "unsupported_media_type",
      );
    }
    // As JSON it reaches the route: the run is still queued (no coordinator), so 409.
    const json = await call(t.url, "POST", path, {
      raw: verdict,
      headers: { "content-type": "application/json" },
    });
    expect(json.status).toBe(409);
    // The token opens the run, then the body is read: a result 100,000 deep is refused unparsed.
    const deep = await call(t.url, "POST", path, {
      raw: `{"status":"succeeded","result":${nestedText(100_000)}}`,
      headers: { "content-type": "application/json" },
    });
    expectProblem(deep, 422, "limit_exceeded");
    expect(deep.body).toMatchObject({ limit: "json_depth" });
  });

  it("serves /docs with a CSP that admits only its own inline script and style", async () => {
    const docs = await call(t.url, "GET", "/docs");
    expect(docs.status).toBe(200);
    const csp = docs.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(docs.headers.get("x-content-type-options")).toBe("nosniff");
    expect(docs.headers.get("referrer-policy")).toBe("no-referrer");
  });
});
