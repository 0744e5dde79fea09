/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * Every route, walked from the routes Fastify registered: without a token (401), with another owner's
 * token (404 for anything naming a resource), with a fixed corpus of malformed input (never a 500); and
 * the OpenAPI document: valid 3.1 structure, covering exactly the registered routes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;
let bob: string;
let taskId: string;
let runId: string;

const EXEMPT = new Set([
  "/",
  "/dashboard/:file",
  "/dashboard.css",
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
]);
/** Authenticated by the per-run secret in their URL, not a bearer token (callback-routes.test.ts). */
const CALLBACKS = new Set(["/v1/runs/:id/complete", "/v1/hooks/agent/:server"]);

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob] = await Promise.all([t.token("alice"), t.token("bob")]);
  const body = { ...CRON_TASK, key: "alices-key" };
  taskId = (await call(t.url, "POST", "/v1/tasks", { token: alice, body })).body.task.id;
  runId = (await call(t.url, "POST", `/v1/tasks/${taskId}/trigger`, { token: alice })).body.id;
  await call(t.url, "PUT", "/v1/calendars/holidays", { token: alice, body: { items: [] } });
});
afterAll(async () => {
  await t.stop();
});

function routes() {
  return t.server.app.punctualRoutes;
}

function concrete(url: string, ids: { task: string; run: string; thread: string }): string {
  return url
    .replace(/^\/v1\/runs\/:id/, `/v1/runs/${ids.run}`)
    .replace(":id", ids.task)
    .replace(":thread_id", ids.thread)
    .replace(":key", "alices-key")
    .replace(":name", "holidays");
}

const VALID_BODIES: Record<string, unknown> = {
  "POST /v1/tasks": CRON_TASK,
  "PATCH /v1/tasks/:id": { title: "x" },
  "POST /v1/tasks/:id/backfill": { from: "2026-01-01T00:00:00Z", to: "2026-01-01T00:05:00Z" },
};

describe("auth and owner isolation on every route", () => {
  it("knows the routes of docs/api.md (the dashboard aside)", () => {
    expect(routes().length).toBeGreaterThanOrEqual(24);
    for (const callback of CALLBACKS) expect(routes().map((r) => r.url)).toContain(callback);
  });

  it("answers 401 without a token on every route but the exempt ones", async () => {
    for (const route of routes()) {
      const path = concrete(route.url, { task: taskId, run: runId, thread: "th" });
      const answer = await call(t.url, route.method, path, {
        ...(VALID_BODIES[`${route.method} ${route.url}`] === undefined
          ? {}
          : { body: VALID_BODIES[`${route.method} ${route.url}`] }),
      });
      if (EXEMPT.has(route.url)) expect(answer.status, route.url).not.toBe(401);
      else if (CALLBACKS.has(route.url))
        expect(answer.status, route.url).toBeGreaterThanOrEqual(404);
      else expect(answer.status, `${route.method} ${route.url}`).toBe(401);
    }
  });

  it("answers 404 to another owner on every route naming a task or run, and lists nothing of theirs", async () => {
    for (const route of routes()) {
      if (EXEMPT.has(route.url) || CALLBACKS.has(route.url)) continue;
      const path = concrete(route.url, { task: taskId, run: runId, thread: "th" });
      const query = route.url.endsWith("/explain") ? "?at=2026-01-01T00:00:00Z" : "";
      const body = VALID_BODIES[`${route.method} ${route.url}`];
      const answer = await call(t.url, route.method, `${path}${query}`, {
        token: bob,
        headers: { "if-match": '"1"' },
        ...(body === undefined ? {} : { body }),
      });
      const label = `${route.method} ${route.url}`;
      // A calendar is named by its owner's name for it: a put makes the caller's own calendar.
      const namesCalendar = route.url.includes(":name") && route.method !== "PUT";
      // So is a task by its key: a put makes (or replaces) the caller's own task of that key.
      const namesKey = route.url.includes(":key") && route.method !== "PUT";
      if (route.url === "/v1/replicas") {
        // The fleet's replicas are an admin's to list: an owner's token is refused outright.
        expect(answer.status, label).toBe(403);
        expect(answer.body.type, label).toBe("https://punctual.dev/problems/forbidden");
      } else if (route.url.includes(":id") || namesCalendar || namesKey) {
        expect(answer.status, label).toBe(404);
        expect(answer.body.type, label).toBe("https://punctual.dev/problems/not_found");
      } else if (route.method === "GET") {
        expect(answer.status, label).toBe(200);
        expect(JSON.stringify(answer.body), label).not.toContain(taskId);
      }
    }
    // Nothing of alice's changed.
    const task = await call(t.url, "GET", `/v1/tasks/${taskId}`, { token: alice });
    expect(task.body).toMatchObject({ title: CRON_TASK.title, status: "enabled", version: 1 });
    const calendar = await call(t.url, "GET", "/v1/calendars/holidays", { token: alice });
    expect(calendar.body).toMatchObject({ name: "holidays", version: 1 });
  });
});

describe("malformed input never yields a 500", () => {
  const BODIES = [
    "{",
    "null",
    "[]",
    '"text"',
    "42",
    '{"title": 1}',
    '{"__proto__": {"polluted": true}, "title": "x"}',
    '{"constructor": {"prototype": {"x": 1}}}',
    JSON.stringify({ ...CRON_TASK, schedule: "daily" }),
    JSON.stringify({ ...CRON_TASK, target: { kind: "agent" } }),
    JSON.stringify({ ...CRON_TASK, metadata: { a: 1 } }),
    JSON.stringify({ from: "yesterday", to: 5 }),
    JSON.stringify({ catch_up: "sometimes", cancel_running: "yes" }),
    "\u0000\u0001",
    "x".repeat(5000),
  ];
  const IDS = ["%00", "..%2F..", "a".repeat(300), "%E2%82", "'; DROP TABLE tasks; --", "%20"];
  const QUERIES = [
    "?limit=-1",
    "?limit=1e9",
    "?limit=abc",
    "?limit=1&limit=2",
    "?cursor=%00",
    "?cursor=eyJ4Ijp0cnVlfQ",
    "?status[]=x",
    "?count=0",
    "?at=2026-13-45T99:99:99Z",
    "?force=maybe",
    "?%%%",
  ];
  const HEADERS: Record<string, string>[] = [
    { "content-type": "application/json; charset=latin-9" },
    { "content-type": "text/plain" },
    { "content-type": "multipart/form-data; boundary=x" },
    { "if-match": "W/" },
    { "if-match": '"99999999999999999999"' },
    { "idempotency-key": "\t" },
    { authorization: "Bearer" },
    { authorization: "Basic YWxpY2U6eA==" },
  ];

  it("holds for bodies, ids, query strings and headers sent to every route", async () => {
    const failures: string[] = [];
    const send = async (method: string, path: string, options: Parameters<typeof call>[3]) => {
      const answer = await call(t.url, method, path, options);
      if (answer.status >= 500 && answer.status !== 501 && answer.status !== 503) {
        failures.push(`${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    };
    for (const route of routes()) {
      const path = concrete(route.url, { task: taskId, run: runId, thread: "th" });
      const json = { "content-type": "application/json" };
      for (const raw of BODIES) {
        if (route.method === "GET") break;
        await send(route.method, path, {
          token: alice,
          raw,
          headers: { ...json, "if-match": '"1"' },
        });
      }
      if (route.url.includes(":")) {
        for (const id of IDS) {
          const bad = route.url.replace(/:(id|thread_id)/, id);
          await send(route.method, bad, { token: alice, headers: { "if-match": "*" } });
        }
      }
      for (const q of QUERIES) await send(route.method, `${path}${q}`, { token: alice });
      for (const headers of HEADERS) {
        await send(route.method, path, {
          ...(headers["authorization"] === undefined ? { token: alice } : {}),
          ...(route.method === "GET" ? {} : { raw: "{}" }),
          headers: { "content-type": "application/json", ...headers },
        });
      }
    }
    expect(failures).toEqual([]);
  });
});

describe("the OpenAPI document", () => {
  it("is an OpenAPI 3.1 document covering every registered route, and only those", async () => {
    const doc = (await call(t.url, "GET", "/openapi.json")).body;
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      expect(path.startsWith("/")).toBe(true);
      for (const [method, operation] of Object.entries(item)) {
        documented.add(`${method.toUpperCase()} ${path}`);
        expect(typeof operation.operationId).toBe("string");
        expect(Object.keys(operation.responses).length).toBeGreaterThan(0);
        for (const response of Object.values(operation.responses as Record<string, any>)) {
          expect(typeof response.description).toBe("string");
        }
        const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        for (const name of pathParams) {
          expect(
            operation.parameters.some((p: any) => p.in === "path" && p.name === name && p.required),
          ).toBe(true);
        }
      }
    }
    const registered = new Set(
      routes().map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, "{$1}")}`),
    );
    expect([...documented].sort()).toEqual([...registered].sort());
  });

  it("resolves every $ref to a component", async () => {
    const doc = (await call(t.url, "GET", "/openapi.json")).body;
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const name = ref.replace(/^"\$ref":"#\/components\/schemas\//, "").replace(/"$/, "");
      expect(doc.components.schemas, ref).toHaveProperty(name);
    }
  });

  it("describes each named shape in its component, not as a reference to itself", async () => {
    const doc = (await call(t.url, "GET", "/openapi.json")).body;
    const schemas = doc.components.schemas as Record<string, Record<string, unknown>>;
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(["Problem", "Task", "Run"]));
    for (const [name, schema] of Object.entries(schemas)) {
      expect(schema.$ref, name).not.toBe(`#/components/schemas/${name}`);
    }
    expect(schemas.Problem?.type).toBe("object");
    expect(Object.keys(schemas.Task?.properties as object)).toEqual(
      expect.arrayContaining(["id", "owner", "schedule", "status", "version"]),
    );
  });
});
