/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * Every problem type the API documents is reachable, each by a request of its own made here: the table
 * is keyed by the exposed codes, so a new code does not compile until a request reaches it. It stands
 * alone (it reads no state another test left), and it includes `internal_error`: a route that throws
 * unexpectedly answers the generic 500 (internal-error.test.ts checks that nothing leaks from it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../../../src/adapters/http/http-app.js";
import { exposedProblems } from "../../../src/adapters/http/error-map.js";
import type { ProblemCode } from "../../../src/adapters/http/error-map.js";
import type { TaskService } from "../../../src/application/tasks/task-service.js";
import type { Instant } from "../../../src/domain/time.js";
import { closedPort } from "../../helpers/webhook-receiver.js";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { Answer, TestServer } from "./http-harness.js";

/** Reached in their own files, with a set-up that is theirs alone. */
const ELSEWHERE = {
  task_not_mutable: "running-task.test.ts (a run really running)",
  task_defective: "task-defect-routes.test.ts (a row corrupted behind the store's back)",
  database_unavailable:
    "test/race/fault-api-database-outage.test.ts (a real PostgreSQL too slow, then out of reach)",
} as const;
/** The launcher outcomes and a lost lease: recorded on the run, never a client's answer (error-map.ts). */
const NEVER_ANSWERED = [
  "lease_lost",
  "thread_busy",
  "launch_failed",
  "launch_indeterminate",
] as const;
type Reached = Exclude<ProblemCode, keyof typeof ELSEWHERE | (typeof NEVER_ANSWERED)[number]>;

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(t.url, method, path, { token, ...options });

async function created(body: unknown = CRON_TASK): Promise<{ id: string }> {
  const answer = await api("POST", "/v1/tasks", { body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.task as { id: string };
}

/** Runs `request` against a server of its own, built with `options`, then stops it. */
async function onServer(
  options: Parameters<typeof startTestServer>[0],
  request: (server: TestServer, token: string) => Promise<Answer>,
): Promise<Answer> {
  const server = await startTestServer(options);
  try {
    return await request(server, await server.token("eve"));
  } finally {
    await server.stop();
  }
}

/** An app over the test server's services whose task service is given by `tasks`. */
async function onApp(
  overrides: { tasks?: TaskService; isShuttingDown?: () => boolean },
  request: (url: string) => Promise<Answer>,
): Promise<Answer> {
  const app = await buildHttpApp({
    tasks: overrides.tasks ?? t.server.runtime.tasks,
    tokens: t.server.tokens,
    idempotency: t.server.runtime.store.idempotency!,
    health: t.server.runtime.store,
    now: () => Date.now() as Instant,
    rateLimit: false,
    ...(overrides.isShuttingDown === undefined ? {} : { isShuttingDown: overrides.isShuttingDown }),
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    return await request(url);
  } finally {
    await app.close();
  }
}

const REACH: Record<Reached, () => Promise<Answer>> = {
  validation_failed: () => api("POST", "/v1/tasks", { body: { ...CRON_TASK, schedule: {} } }),
  limit_exceeded: () =>
    api("POST", "/v1/tasks", {
      body: { ...CRON_TASK, target: { kind: "handler", name: "log", input: "x".repeat(300_000) } },
    }),
  not_found: () => api("GET", "/v1/tasks/nope"),
  version_conflict: async () => {
    const task = await created();
    return api("PATCH", `/v1/tasks/${task.id}`, {
      body: { title: "x" },
      headers: { "if-match": '"7"' },
    });
  },
  run_active: async () => {
    const task = await created();
    expect((await api("POST", `/v1/tasks/${task.id}/trigger`)).status).toBe(202);
    return api("POST", `/v1/tasks/${task.id}/trigger`);
  },
  illegal_transition: async () => {
    const task = await created();
    expect((await api("POST", `/v1/tasks/${task.id}/cancel`)).status).toBe(200);
    return api("POST", `/v1/tasks/${task.id}/pause`);
  },
  target_unavailable: async () => {
    const port = await closedPort();
    const down = {
      name: "down",
      url: `http://127.0.0.1:${port}`,
      headers: {},
      flavor: "langgraph" as const,
      webhooks: false,
      requestTimeoutMs: 2000,
      pollIntervalMs: 5000,
      knobs: { config: {}, context: {} },
      assistantId: null,
    };
    return onServer({ agentServers: [down] }, (server, eve) =>
      call(server.url, "POST", "/v1/tasks", {
        token: eve,
        body: {
          title: "on a thread",
          schedule: { type: "cron", cron: "0 9 * * *" },
          target: { kind: "agent", server: "down", assistant_id: "agent", input: null },
          context: { mode: "reuse_thread", thread_id: "6f1c2b7e-0d4a-4c53-9a51-1f0e3c1b2a77" },
        },
      }),
    );
  },
  calendar_in_use: async () => {
    expect(
      (await api("PUT", "/v1/calendars/closed", { body: { items: ["2099-12-25"] } })).status,
    ).toBe(201);
    await created({
      ...CRON_TASK,
      schedule: { ...CRON_TASK.schedule, exclude: [{ calendar: "closed" }] },
    });
    return api("DELETE", "/v1/calendars/closed");
  },
  key_taken: async () => {
    await created({ ...CRON_TASK, key: "taken" });
    return api("POST", "/v1/tasks", { body: { ...CRON_TASK, key: "taken" } });
  },
  quota_exceeded: () =>
    onServer({ policy: { quotas: { runsPerMinute: 1 } } }, async (server, eve) => {
      const task = await call(server.url, "POST", "/v1/tasks", {
        token: eve,
        body: { ...CRON_TASK, options: { overlap: "allow_all" } },
      });
      const path = `/v1/tasks/${task.body.task.id}/trigger`;
      expect((await call(server.url, "POST", path, { token: eve })).status).toBe(202);
      return call(server.url, "POST", path, { token: eve });
    }),
  malformed_request: () =>
    api("POST", "/v1/tasks", { raw: "{", headers: { "content-type": "application/json" } }),
  unauthorized: () => call(t.url, "GET", "/v1/tasks"),
  forbidden: () => api("GET", "/v1/replicas"),
  route_not_found: () => api("GET", "/v1/nothing"),
  method_not_allowed: () => api("DELETE", "/v1/tasks"),
  idempotency_in_progress: async () => {
    await t.server.runtime.store.idempotency!.reserve(
      { owner: "alice" as never, route: "POST /v1/tasks", key: "in-flight" },
      "hash",
      Date.now() as Instant,
    );
    return api("POST", "/v1/tasks", {
      body: CRON_TASK,
      headers: { "idempotency-key": "in-flight" },
    });
  },
  idempotency_key_reused: async () => {
    const headers = { "idempotency-key": "once" };
    expect((await api("POST", "/v1/tasks", { body: CRON_TASK, headers })).status).toBe(201);
    return api("POST", "/v1/tasks", { body: { ...CRON_TASK, title: "other" }, headers });
  },
  unsupported_media_type: () =>
    api("POST", "/v1/tasks", {
      raw: "title=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }),
  precondition_required: async () => {
    const task = await created();
    return api("PATCH", `/v1/tasks/${task.id}`, { body: { title: "x" } });
  },
  rate_limited: () =>
    onServer({ rateLimit: { burst: 1, perSecond: 0.01 } }, async (server, eve) => {
      expect((await call(server.url, "GET", "/v1/tasks", { token: eve })).status).toBe(200);
      return call(server.url, "GET", "/v1/tasks", { token: eve });
    }),
  internal_error: () => {
    const tasks = new Proxy(t.server.runtime.tasks, {
      get(target, property, receiver) {
        if (property === "list") return () => Promise.reject(new TypeError("a bug"));
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    return onApp({ tasks }, (url) => call(url, "GET", "/v1/tasks", { token }));
  },
  not_ready: () => onApp({ isShuttingDown: () => true }, (url) => call(url, "GET", "/readyz")),
};

describe("problem types", () => {
  it.each(exposedProblems().filter((p) => !(p.code in ELSEWHERE)))(
    "reaches $code ($status) with a request of its own",
    async ({ code, type, status }) => {
      const answer = await REACH[code as Reached]();
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ type, status });
      expect(answer.status).toBe(status);
      expect(typeof answer.body.detail).toBe("string");
    },
  );

  it("knows which codes are reached elsewhere and which are never answered", () => {
    const codes: ProblemCode[] = exposedProblems().map((p) => p.code);
    for (const code of Object.keys(ELSEWHERE)) expect(codes).toContain(code);
    for (const code of NEVER_ANSWERED) expect(codes).not.toContain(code);
    expect(codes).toContain("internal_error");
  });

  it("answers a body over 1 MiB with limit_exceeded as 413", async () => {
    const answer = await api("POST", "/v1/tasks", {
      raw: JSON.stringify({ ...CRON_TASK, description: "x".repeat(1100 * 1024) }),
      headers: { "content-type": "application/json" },
    });
    expect(answer.status).toBe(413);
    expect(answer.body.type).toBe("https://punctual.dev/problems/limit_exceeded");
  });
});
