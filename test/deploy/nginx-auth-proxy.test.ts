/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * The nginx `auth_request` example of docs/targets.md#deerflows-frontend-behind-an-authenticating-proxy,
 * run for real: deploy/nginx/deerflow-punctual.conf and deerflow-user.js under Debian's nginx (with its
 * njs module), on free ports, in front of `punctual serve --deerflow-api --auth-proxy-*` (the built CLI)
 * and a stand-in for DeerFlow's gateway that answers `GET /api/v1/auth/me` for two session cookies as
 * DeerFlow's does (`{"id": ..., "email": ...}`, 401 otherwise). The calls are made as DeerFlow's
 * frontend makes them: the `access_token` cookie and, on state-changing methods, `X-CSRF-Token` echoing
 * the `csrf_token` cookie. Only the addresses, the script's path and the secret of the files are
 * rewritten. CI installs nginx and its njs module (.ci/run) and never skips this test; elsewhere it
 * skips, saying so, when they are absent.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../e2e/build.js";
import { startCli, stopCli, waitFor } from "../e2e/process.js";
import type { CliProcess } from "../e2e/process.js";

const NGINX = process.env["PUNCTUAL_NGINX"] ?? "/usr/sbin/nginx";
const NJS =
  process.env["PUNCTUAL_NGINX_JS_MODULE"] ?? "/usr/lib/nginx/modules/ngx_http_js_module.so";
const DEPLOY = join(import.meta.dirname, "..", "..", "deploy", "nginx");
const SECRET = "nginx-test-secret-0123456789abcdef";
const IN_CI = (process.env["CI"] ?? "") !== "";

/** Why this machine cannot run the test, or null. */
function missing(): string | null {
  if (!existsSync(NGINX)) return `nginx is not installed at ${NGINX} (PUNCTUAL_NGINX)`;
  if (!existsSync(NJS)) {
    return `nginx's njs module is not installed at ${NJS} (Debian: libnginx-mod-http-js; PUNCTUAL_NGINX_JS_MODULE)`;
  }
  return null;
}
const absent = missing();
if (absent !== null && !IN_CI) {
  console.warn(`test/deploy/nginx-auth-proxy.test.ts skipped: ${absent}`);
}

/** The gateway's sessions: `access_token` cookie -> DeerFlow user. */
const SESSIONS = new Map([
  ["session-alice", { id: "user-alice", email: "alice@example.com" }],
  ["session-bob", { id: "user-bob", email: "bob@example.com" }],
]);

let dir = "";
let gateway: Server | undefined;
let gatewayUrl = "";
let serve: CliProcess | undefined;
let nginx: ChildProcess | undefined;
let nginxOutput = "";
let base = "";

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** DeerFlow's gateway, as far as the proxy and `--deerflow-api` ask it. */
function startGateway(): Promise<void> {
  gateway = createServer((req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/api/v1/auth/me" && req.method === "GET") {
      const user = SESSIONS.get(cookieOf(req.headers.cookie, "access_token") ?? "");
      if (user === undefined) json(401, { detail: "Not authenticated" });
      else json(200, { ...user, system_role: "user", needs_setup: false, oauth_provider: null });
    } else if (req.url === "/api/models") {
      json(200, { models: [], from: "gateway" });
    } else {
      json(404, { detail: "Not Found" });
    }
  });
  return new Promise((resolve) =>
    gateway!.listen(0, "127.0.0.1", () => {
      gatewayUrl = `http://127.0.0.1:${(gateway!.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

/** A port nothing listens on now (nginx cannot be asked for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => {
        resolve(port);
      });
    });
  });
}

/** `text` with each `[from, to]` replaced; each `from` must occur, so that a drift of the file fails here. */
function rewrite(text: string, pairs: readonly (readonly [string, string])[]): string {
  let out = text;
  for (const [from, to] of pairs) {
    expect(out, `deploy/nginx no longer holds ${from}`).toContain(from);
    out = out.split(from).join(to);
  }
  return out;
}

async function startNginx(punctualUrl: string): Promise<void> {
  const port = await freePort();
  const punctual = new URL(punctualUrl).host;
  const gatewayHost = new URL(gatewayUrl).host;
  const conf = rewrite(readFileSync(join(DEPLOY, "deerflow-punctual.conf"), "utf8"), [
    ["/etc/nginx/deerflow-user.js", join(dir, "deerflow-user.js")],
    ["listen 80;", `listen 127.0.0.1:${port};`],
    ["http://punctual:8080", `http://${punctual}`],
    ["http://gateway:8001", `http://${gatewayHost}`],
    ['"change-me-to-a-long-random-secret"', `"${SECRET}"`],
  ]);
  writeFileSync(join(dir, "deerflow-punctual.conf"), conf);
  writeFileSync(
    join(dir, "deerflow-user.js"),
    readFileSync(join(DEPLOY, "deerflow-user.js"), "utf8"),
  );
  for (const sub of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  writeFileSync(
    join(dir, "nginx.conf"),
    [
      `load_module ${NJS};`,
      "daemon off;",
      // One process, as whoever runs the test: no worker user needing access to the temporary files.
      "master_process off;",
      `pid ${join(dir, "nginx.pid")};`,
      `error_log ${join(dir, "error.log")} notice;`,
      "events {}",
      "http {",
      "  access_log off;",
      ...["body", "proxy", "fastcgi", "uwsgi", "scgi"].map(
        (sub) => `  ${sub === "body" ? "client_body" : sub}_temp_path ${join(dir, sub)};`,
      ),
      `  include ${join(dir, "deerflow-punctual.conf")};`,
      "}",
      "",
    ].join("\n"),
  );
  nginx = spawn(NGINX, ["-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  nginx.stdout?.on("data", (chunk: Buffer) => (nginxOutput += chunk.toString()));
  nginx.stderr?.on("data", (chunk: Buffer) => (nginxOutput += chunk.toString()));
  base = `http://127.0.0.1:${port}`;
  const log = () => {
    const errors = existsSync(join(dir, "error.log"))
      ? readFileSync(join(dir, "error.log"), "utf8")
      : "";
    return `${nginxOutput}\n${errors}`;
  };
  await waitFor(
    async () => {
      if (nginx?.exitCode !== null) throw new Error(`nginx exited:\n${log()}`);
      try {
        return (await fetch(`${base}/api/models`)).status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 15_000, what: "nginx to answer", describe: log },
  );
}

beforeAll(async () => {
  if (absent !== null && !IN_CI) return;
  if (absent !== null) {
    throw new Error(`${absent}: CI installs it (.ci/run), and this test never skips there`);
  }
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-nginx-"));
  await startGateway();
  serve = startCli(
    [
      "serve",
      "--database",
      join(dir, "punctual.db"),
      "--port",
      "0",
      "--deerflow-api",
      "deerflow",
      "--auth-proxy-header",
      "X-Forwarded-User",
      "--auth-proxy-secret-header",
      "X-Punctual-Proxy",
    ],
    {
      cwd: dir,
      env: {
        PUNCTUAL_AUTH_PROXY_SECRET: SECRET,
        PUNCTUAL_AGENT_SERVERS: JSON.stringify([
          { name: "deerflow", flavor: "deerflow", url: `${gatewayUrl}/api` },
        ]),
      },
    },
  );
  const cli = serve;
  const url = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], {
    timeoutMs: 30_000,
    what: "punctual serve to listen",
    describe: () => cli.output(),
  });
  await startNginx(url);
}, 240_000);

afterAll(async () => {
  if (nginx !== undefined && nginx.exitCode === null) {
    const ended = new Promise((resolve) => nginx!.once("exit", resolve));
    nginx.kill("SIGQUIT");
    await ended;
  }
  if (serve !== undefined && serve.child.exitCode === null) await stopCli(serve, "SIGTERM");
  await new Promise<void>((resolve) => {
    if (gateway === undefined) resolve();
    else
      gateway.close(() => {
        resolve();
      });
  });
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

/** A call as DeerFlow's frontend makes it: its cookies, and the CSRF header on state-changing methods. */
async function frontend(
  method: string,
  path: string,
  options: {
    session?: string;
    csrf?: "pair" | "missing" | "mismatch";
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; body: any }> {
  const cookies = [
    ...(options.session === undefined ? [] : [`access_token=${options.session}`]),
    "csrf_token=csrf-123",
  ];
  const csrf = options.csrf ?? "pair";
  const changing = method !== "GET";
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      cookie: cookies.join("; "),
      ...(changing && csrf !== "missing"
        ? { "x-csrf-token": csrf === "pair" ? "csrf-123" : "other" }
        : {}),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // nginx's own error pages are HTML.
  }
  return { status: response.status, body };
}

const task = (title: string) => ({
  title,
  prompt: "Summarise today's GitHub trending repositories",
  schedule_type: "cron",
  schedule_spec: { cron: "0 9 * * 1-5" },
  timezone: "Europe/Berlin",
});

describe.skipIf(absent !== null && !IN_CI)(
  "nginx auth_request in front of serve --auth-proxy-* (deploy/nginx)",
  () => {
    it("lets each DeerFlow session through as its own owner", async () => {
      expect(await frontend("GET", "/api/scheduled-tasks", { session: "session-alice" })).toEqual({
        status: 200,
        body: [],
      });
      const made = await frontend("POST", "/api/scheduled-tasks", {
        session: "session-alice",
        body: task("alice's digest"),
      });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body).toMatchObject({ title: "alice's digest", status: "enabled" });
      const mine = await frontend("GET", "/api/scheduled-tasks", { session: "session-alice" });
      expect((mine.body as { id: string }[]).map((t) => t.id)).toEqual([made.body.id]);
      // Bob is another owner: he sees none of Alice's tasks, and hers is not found for him.
      expect(
        (await frontend("GET", "/api/scheduled-tasks", { session: "session-bob" })).body,
      ).toEqual([]);
      expect(
        await frontend("GET", `/api/scheduled-tasks/${made.body.id}`, { session: "session-bob" }),
      ).toEqual({ status: 404, body: { detail: "Scheduled task not found" } });
      expect(
        (
          await frontend("PATCH", `/api/scheduled-tasks/${made.body.id}`, {
            session: "session-alice",
            body: { title: "renamed" },
          })
        ).body,
      ).toMatchObject({ title: "renamed" });
      expect(
        await frontend("DELETE", `/api/scheduled-tasks/${made.body.id}`, {
          session: "session-alice",
        }),
      ).toEqual({ status: 200, body: { id: made.body.id, deleted: true } });
    });

    it("routes a thread's task list to punctual, which answers with DeerFlow's text", async () => {
      expect(
        await frontend("GET", "/api/threads/thread-1/scheduled-tasks", { session: "session-bob" }),
      ).toEqual({ status: 404, body: { detail: "Thread thread-1 not found" } });
    });

    it("refuses a request without a session, or with one the gateway does not know (401)", async () => {
      expect((await frontend("GET", "/api/scheduled-tasks")).status).toBe(401);
      expect(
        (await frontend("GET", "/api/scheduled-tasks", { session: "session-revoked" })).status,
      ).toBe(401);
      expect(
        (await frontend("POST", "/api/scheduled-tasks", { session: "nobody", body: task("x") }))
          .status,
      ).toBe(401);
    });

    it("refuses a state-changing request that fails the CSRF double-submit check (403)", async () => {
      for (const csrf of ["missing", "mismatch"] as const) {
        const refused = await frontend("POST", "/api/scheduled-tasks", {
          session: "session-alice",
          csrf,
          body: task(`refused ${csrf}`),
        });
        expect(refused.status).toBe(403);
      }
      const listed = await frontend("GET", "/api/scheduled-tasks", { session: "session-alice" });
      const titles = (listed.body as { title: string }[]).map((t) => t.title);
      expect(titles).not.toContain("refused missing");
      expect(titles).not.toContain("refused mismatch");
    });

    it("never lets a client name the user: the identity headers it sends are replaced", async () => {
      const alices = await frontend("POST", "/api/scheduled-tasks", {
        session: "session-alice",
        body: task("alice's only"),
      });
      expect(alices.status).toBe(200);
      const forged = {
        "x-forwarded-user": "user-alice",
        "x-punctual-proxy": SECRET,
        authorization: "Bearer not-a-token",
      };
      // Bob's session with Alice's name in the header: still Bob.
      const bobs = await frontend("GET", "/api/scheduled-tasks", {
        session: "session-bob",
        headers: forged,
      });
      expect(bobs).toEqual({ status: 200, body: [] });
      // No session at all: the proxy refuses before punctual sees the header.
      expect((await frontend("GET", "/api/scheduled-tasks", { headers: forged })).status).toBe(401);
    });

    it("passes the rest of /api to DeerFlow's gateway", async () => {
      expect(await frontend("GET", "/api/models")).toEqual({
        status: 200,
        body: { models: [], from: "gateway" },
      });
    });
  },
);

describe("docs/targets.md's nginx excerpt", () => {
  it("is the example's own location block, line for line", () => {
    const docs = readFileSync(join(DEPLOY, "..", "..", "docs", "targets.md"), "utf8");
    const excerpt = /```nginx\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(excerpt, "docs/targets.md has an nginx excerpt").toBeDefined();
    const conf = readFileSync(join(DEPLOY, "deerflow-punctual.conf"), "utf8")
      .split("\n")
      .map((line) => line.trim());
    for (const line of excerpt!.split("\n").map((l) => l.trim())) {
      if (line !== "") expect(conf).toContain(line);
    }
  });
});
