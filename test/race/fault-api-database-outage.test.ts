/**
 * The HTTP API when its database does not answer (issue 33, docs/errors.md#http-only-problems): a real
 * `punctual serve` on a real PostgreSQL, reached through a TCP proxy the test controls, with a 1 s
 * statement timeout. A table locked by another session makes the listing hit the server's statement
 * timeout; a blackholed proxy makes the client give up on its answer; a proxy gone makes every connection
 * fail. Each answers 503 `database_unavailable` with `Retry-After`, within a bounded time, never a
 * generic 500; once the database answers again, so does the API. The DeerFlow and LangGraph-compatible
 * routes answer the same outage 503 with `Retry-After` in their platforms' own `{"detail": "..."}`
 * (docs/targets.md), never their generic 500.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../e2e/build.js";
import { createToken, startCli, stopCli, waitFor } from "../e2e/process.js";
import type { CliProcess } from "../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";

const runnable = await raceTestsRunnable("test/race/fault-api-database-outage.test.ts");

const PROBLEM = "https://punctual.dev/problems/database_unavailable";
/** The statement timeout given to serve; the client gives up 2 s after it. */
const STATEMENT_TIMEOUT_S = 1;
/** Every answer must come within this: the timeouts plus room for a loaded host, far from "never". */
const ANSWER_BOUND_MS = 20_000;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
  readonly ms: number;
}

describe.skipIf(!runnable)("the API on a database that does not answer", () => {
  let dir = "";
  let database: PostgresTestDatabase;
  let proxy: TcpProxy;
  let serve: CliProcess | null = null;
  let base = "";
  let token = "";

  const get = async (path: string, body?: unknown): Promise<Answer> => {
    const started = Date.now();
    const response = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: JSON.parse(text) as Record<string, unknown>,
      ms: Date.now() - started,
    };
  };

  const expectUnavailable = (answer: Answer, detail: RegExp): void => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(answer.body).toMatchObject({ type: PROBLEM, status: 503 });
    expect(answer.body["detail"]).toMatch(detail);
  };

  /** The platform routes: DeerFlow's task list and LangGraph's cron search (docs/targets.md). */
  const platformRoutes = [
    { name: "DeerFlow", path: "/api/scheduled-tasks", body: undefined },
    { name: "LangGraph", path: "/langgraph/lg/runs/crons/search", body: {} },
  ] as const;

  /** A platform route's outage: 503 and Retry-After in the platform's `{detail}`, not a problem. */
  const expectPlatformUnavailable = (answer: Answer, detail: RegExp): void => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(Object.keys(answer.body)).toEqual(["detail"]);
    expect(answer.body["detail"]).toMatch(detail);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-api-outage-"));
    database = await createPostgresTestDatabase();
    const url = new URL(database.url ?? "");
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await ensureBuilt();
    token = await createToken(database.url ?? "", "outage");
    serve = startCli(
      [
        "serve",
        "--database",
        proxy.url(database.url ?? ""),
        "--port",
        "0",
        "--no-coordinator",
        "--pg-statement-timeout",
        `${String(STATEMENT_TIMEOUT_S)}s`,
        ...["--deerflow-api", "df", "--langgraph-api", "lg"],
      ],
      {
        cwd: dir,
        // Never called: the routes answer from the database alone.
        env: {
          PUNCTUAL_AGENT_SERVERS: JSON.stringify([
            { name: "df", url: "http://127.0.0.1:9/api", flavor: "deerflow" },
            { name: "lg", url: "http://127.0.0.1:9" },
          ]),
        },
      },
    );
    const cli = serve;
    base = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], {
      timeoutMs: 30_000,
      what: "serve to listen",
      describe: () => cli.output(),
    });
  }, 240_000);

  afterAll(async () => {
    if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
    await proxy.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "answers 503 database_unavailable with Retry-After, then 200 again",
    { timeout: 120_000 },
    async () => {
      expect((await get("/v1/tasks")).status).toBe(200);

      // A lock another session holds: the listing waits on it until the server's statement timeout.
      const admin = new pg.Client({ connectionString: database.url ?? "" });
      await admin.connect();
      try {
        await admin.query("BEGIN");
        await admin.query("LOCK TABLE punctual.tasks IN ACCESS EXCLUSIVE MODE");
        const locked = await get("/v1/tasks");
        expectUnavailable(locked, /did not answer in time/);
        expect(locked.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_S * 1000 - 100);
        for (const route of platformRoutes) {
          const answer = await get(route.path, route.body);
          expectPlatformUnavailable(answer, /did not answer in time/);
          expect(answer.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_S * 1000 - 100);
        }
        await admin.query("ROLLBACK");
      } finally {
        await admin.end();
      }
      expect((await get("/v1/tasks")).status).toBe(200);
      for (const route of platformRoutes) {
        expect((await get(route.path, route.body)).status, route.name).toBe(200);
      }

      // Packets dropped: the statement never reaches the server, the client gives up on its answer.
      proxy.blackhole();
      try {
        expectUnavailable(await get("/v1/tasks"), /did not answer in time/);
      } finally {
        proxy.heal();
      }
      await waitFor(async () => ((await get("/v1/tasks")).status === 200 ? true : undefined), {
        timeoutMs: 30_000,
        what: "the API to answer 200 once healed",
      });

      // The way to the server gone: connections are refused.
      await proxy.close();
      expectUnavailable(await get("/v1/tasks"), /could not be reached|did not answer in time/);
      for (const route of platformRoutes) {
        expectPlatformUnavailable(
          await get(route.path, route.body),
          /could not be reached|did not answer in time/,
        );
      }
      const output = serve?.output() ?? "";
      expect(output).toContain("the database did not answer a request");
      expect(output).not.toContain("unexpected error answering a request");
      expect(output).not.toContain("unexpected error answering a DeerFlow-compatible request");
      expect(output).not.toContain("unexpected error answering a LangGraph crons request");
    },
  );
});
