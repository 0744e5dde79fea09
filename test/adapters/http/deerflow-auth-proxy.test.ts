/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * DeerFlow's unmodified frontend against `serve --deerflow-api` behind an authenticating proxy (issue
 * 31, docs/targets.md#a-deerflow-compatible-api, docs/security.md#auth-proxy). The calls are made the way
 * DeerFlow's `frontend/src/core/scheduled-tasks/api.ts` makes them through its fetcher: the session
 * cookie (`access_token`) and, on state-changing methods, `X-CSRF-Token` echoed from the `csrf_token`
 * cookie; never `Authorization`. A small proxy stands for nginx's `auth_request`: it asks a stand-in for
 * DeerFlow's gateway who the cookie belongs to, checks the CSRF pair, and forwards with the user in
 * `X-Forwarded-User` and the shared secret. Two users, each their own owner.
 */
import { createServer, request as httpRequest } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

const SECRET = "proxy-secret-0123456789abcdef";
/** The gateway's sessions: `access_token` cookie -> user id (its `/api/v1/auth/me`). */
const SESSIONS = new Map([
  ["session-alice", "user-alice"],
  ["session-bob", "user-bob"],
]);

let fake: FakeAgentServer;
let t: TestServer;
let proxy: Server;
let proxyUrl = "";

function cookiesOf(headers: IncomingHttpHeaders): Map<string, string> {
  const jar = new Map<string, string>();
  for (const pair of (headers.cookie ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0) jar.set(pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim()));
  }
  return jar;
}

/** The nginx stand-in: auth_request, the double-submit CSRF check, then proxy_pass with the user. */
function startProxy(upstream: string): Promise<void> {
  proxy = createServer((req, res) => {
    const jar = cookiesOf(req.headers);
    const user = SESSIONS.get(jar.get("access_token") ?? "");
    if (user === undefined) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "Authentication required" }));
      return;
    }
    const changing = !["GET", "HEAD", "OPTIONS"].includes(req.method ?? "GET");
    if (changing && (jar.get("csrf_token") ?? "") !== req.headers["x-csrf-token"]) {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "CSRF token missing or invalid" }));
      return;
    }
    const target = new URL(req.url ?? "/", upstream);
    const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
    // What a client sent in the identity headers never passes; the proxy sets them.
    delete headers["x-forwarded-user"];
    delete headers["x-proxy-secret"];
    delete headers.cookie;
    const forward = httpRequest(
      target,
      {
        method: req.method,
        headers: { ...headers, "x-forwarded-user": user, "x-proxy-secret": SECRET },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.socket?.destroy());
    req.pipe(forward);
  });
  return new Promise((resolve) =>
    proxy.listen(0, "127.0.0.1", () => {
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

/**
 * DeerFlow's frontend module for one browser session: each function makes the request its namesake in
 * `scheduled-tasks/api.ts` makes (path, method, body), sent as its fetcher sends it.
 */
function frontendOf(session: string) {
  const csrf = `csrf-${session}`;
  const fetchAs = async (path: string, init: RequestInit = {}) => {
    const method = init.method ?? "GET";
    const headers = new Headers(init.headers);
    if (["POST", "PUT", "DELETE", "PATCH"].includes(method)) headers.set("X-CSRF-Token", csrf);
    headers.set("cookie", `access_token=${session}; csrf_token=${csrf}`);
    const response = await fetch(`${proxyUrl}${path}`, { ...init, headers });
    const body: any = await response.json();
    return { status: response.status, body };
  };
  const json = (method: string, payload: unknown): RequestInit => ({
    method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload),
  });
  const task = (id: string, rest = "") => `/api/scheduled-tasks/${encodeURIComponent(id)}${rest}`;
  return {
    fetchScheduledTasks: () => fetchAs("/api/scheduled-tasks"),
    fetchThreadScheduledTasks: (thread: string) =>
      fetchAs(`/api/threads/${encodeURIComponent(thread)}/scheduled-tasks`),
    fetchScheduledTaskRuns: (id: string) => fetchAs(task(id, "/runs")),
    createScheduledTask: (payload: unknown) =>
      fetchAs("/api/scheduled-tasks", json("POST", payload)),
    updateScheduledTask: (id: string, payload: unknown) =>
      fetchAs(task(id), json("PATCH", payload)),
    pauseScheduledTask: (id: string) => fetchAs(task(id, "/pause"), { method: "POST" }),
    resumeScheduledTask: (id: string) => fetchAs(task(id, "/resume"), { method: "POST" }),
    triggerScheduledTask: (id: string) => fetchAs(task(id, "/trigger"), { method: "POST" }),
    deleteScheduledTask: (id: string) => fetchAs(task(id), { method: "DELETE" }),
  };
}

beforeAll(async () => {
  fake = await FakeAgentServer.start({ flavor: "deerflow", autoFinishAfterMs: 50 });
  t = await startTestServer({
    runCoordinator: true,
    agentServers: [
      serverConfig("deer", fake.url, {
        flavor: "deerflow",
        pollIntervalMs: 100,
        requestTimeoutMs: 2000,
      }),
    ],
    deerflowApi: "deer",
    authProxy: {
      header: "X-Forwarded-User",
      secretHeader: { name: "X-Proxy-Secret", secret: SECRET },
    },
  });
  await startProxy(t.url);
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await t.stop();
  await fake.close();
});

const daily = {
  title: "daily digest",
  prompt: "Summarise today's news",
  schedule_type: "cron",
  schedule_spec: { cron: "0 9 * * *" },
  timezone: "Europe/Berlin",
  context_mode: "fresh_thread_per_run",
};

describe("DeerFlow's frontend through an authenticating proxy", () => {
  it("gives each DeerFlow user their own tasks, from the cookie alone", async () => {
    const alice = frontendOf("session-alice");
    const bob = frontendOf("session-bob");
    const created = await alice.createScheduledTask(daily);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;

    expect((await alice.fetchScheduledTasks()).body.map((task: any) => task.id)).toContain(id);
    expect((await bob.fetchScheduledTasks()).body).toEqual([]);
    expect(await bob.pauseScheduledTask(id)).toMatchObject({
      status: 404,
      body: { detail: "Scheduled task not found" },
    });

    const renamed = await alice.updateScheduledTask(id, { title: "morning digest" });
    expect(renamed.body).toMatchObject({ id, title: "morning digest" });
    expect((await alice.pauseScheduledTask(id)).body.status).toBe("paused");
    expect((await alice.resumeScheduledTask(id)).body.status).toBe("enabled");
    const triggered = await alice.triggerScheduledTask(id);
    expect(triggered.body).toMatchObject({ id, triggered: true });
    await waitFor(
      async () => {
        const runs = (await alice.fetchScheduledTaskRuns(id)).body as any[];
        return runs.some((run) => run.status === "success") ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the triggered run to succeed" },
    );
    // The owner is the user the proxy named: punctual's own API shows it to an admin.
    const admin = await t.token("root", true);
    const seen = await call(t.url, "GET", `/v1/tasks/${id}`, { token: admin });
    expect(seen.body.owner).toBe("user-alice");

    expect(await bob.deleteScheduledTask(id)).toMatchObject({ status: 404 });
    expect((await alice.deleteScheduledTask(id)).body).toEqual({ id, deleted: true });
  });

  it("answers another user's thread 404 with DeerFlow's text", async () => {
    fake.createThread("thread-of-bob", { punctual_owner: "user-bob" });
    const answer = await frontendOf("session-alice").fetchThreadScheduledTasks("thread-of-bob");
    expect(answer).toMatchObject({
      status: 404,
      body: { detail: "Thread thread-of-bob not found" },
    });
    const own = await frontendOf("session-bob").fetchThreadScheduledTasks("thread-of-bob");
    expect(own).toMatchObject({ status: 200, body: [] });
  });

  it("trusts the user header only from the proxy; bearer tokens keep working", async () => {
    // Straight to punctual, past the proxy: the header alone, or with a wrong secret, is nobody.
    for (const headers of [
      { "x-forwarded-user": "user-alice" },
      { "x-forwarded-user": "user-alice", "x-proxy-secret": "not-the-secret-at-all" },
    ]) {
      const answer = await call(t.url, "GET", "/api/scheduled-tasks", { headers });
      expect(answer.status).toBe(401);
    }
    const token = await t.token("user-alice");
    const mine = await call(t.url, "GET", "/api/scheduled-tasks", { token });
    expect(mine.status).toBe(200);
    // A token wins over the proxy's header: the token's owner, not the named user.
    const carol = await t.token("carol");
    const both = await call(t.url, "GET", "/api/scheduled-tasks", {
      token: carol,
      headers: { "x-forwarded-user": "user-alice", "x-proxy-secret": SECRET },
    });
    expect(both).toMatchObject({ status: 200, body: [] });
  });
});
