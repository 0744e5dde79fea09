/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- API answers are untyped JSON, checked by the assertions */
/**
 * A bug answers a generic 500 and keeps its detail for the log (CONVENTIONS "Errors", docs/errors.md):
 * routes whose task service throws what no error map knows (a TypeError, a driver error carrying SQL)
 * answer `internal_error` on the API and DeerFlow's own 500 on its routes, with no message, stack, SQL
 * or secret in the body or the headers; the server log has the whole error.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../../../src/adapters/http/http-app.js";
import type { Instant } from "../../../src/domain/time.js";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { Answer, TestServer } from "./http-harness.js";

/** What the failing task service throws: each string must stay out of every answer. */
const SECRET_SQL = "SELECT secret_hash FROM tokens WHERE owner = 'alice-7f3e'";
const LEAKS = ["secret_hash", "alice-7f3e", "SELECT", "at async", "internal-error.test", ".ts:"];

class DriverError extends Error {
  readonly code = "XX000";
  readonly query = SECRET_SQL;
}

let t: TestServer;
let token: string;
let url: string;
let close: () => Promise<void>;
const logLines: string[] = [];

beforeAll(async () => {
  t = await startTestServer();
  token = await t.token("alice");
  // Every method of the task service fails as a bug would: some reject, some throw synchronously.
  const tasks = new Proxy(t.server.runtime.tasks, {
    get(_target, property) {
      if (property === "get") {
        return () => {
          throw new TypeError(`cannot read properties of undefined (reading '${SECRET_SQL}')`);
        };
      }
      return () => Promise.reject(new DriverError(`syntax error in ${SECRET_SQL}`));
    },
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString("utf8"));
      done();
    },
  });
  const app = await buildHttpApp({
    tasks,
    tokens: t.server.tokens,
    idempotency: t.server.runtime.store.idempotency!,
    health: t.server.runtime.store,
    now: () => Date.now() as Instant,
    rateLimit: false,
    logger: pino({ level: "info" }, sink),
    deerflow: { server: "deer", assistantId: "lead_agent" },
  });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
  close = () => app.close();
});
afterAll(async () => {
  await close();
  await t.stop();
});

function expectNothingLeaked(answer: Answer): void {
  const text = JSON.stringify(answer.body) + JSON.stringify([...answer.headers.entries()]);
  for (const leak of LEAKS) expect(text, `the answer shows "${leak}"`).not.toContain(leak);
  expect(text).not.toMatch(/DriverError|TypeError|XX000|stack/);
}

describe("an unexpected error in a route", () => {
  it.each([
    ["GET", "/v1/tasks", undefined],
    ["GET", "/v1/tasks/some-id", undefined],
    ["POST", "/v1/tasks", CRON_TASK],
  ] as const)(
    "answers %s %s with a generic 500 internal_error problem",
    async (method, path, body) => {
      const answer = await call(url, method, path, { token, ...(body ? { body } : {}) });
      expect(answer.status).toBe(500);
      expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(answer.body).toEqual({
        type: "https://punctual.dev/problems/internal_error",
        title: "Internal error",
        status: 500,
        detail: "an unexpected error; see the server log",
      });
      expectNothingLeaked(answer);
    },
  );

  it.each([
    ["GET", "/api/scheduled-tasks"],
    ["GET", "/api/scheduled-tasks/some-id"],
    ["POST", "/api/scheduled-tasks/some-id/pause"],
  ] as const)("answers DeerFlow's %s %s with its generic 500", async (method, path) => {
    const answer = await call(url, method, path, { token });
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ detail: "Internal Server Error" });
    expectNothingLeaked(answer);
  });

  it("logs the whole error, SQL and stack included, for the operator", async () => {
    logLines.length = 0;
    expect((await call(url, "GET", "/v1/tasks", { token })).status).toBe(500);
    const entry = logLines.map((line) => JSON.parse(line)).find((line) => line.err !== undefined);
    expect(entry, logLines.join("")).toBeDefined();
    expect(entry.level).toBe(50);
    expect(entry.err.message).toContain(SECRET_SQL);
    expect(entry.err.type).toBe("DriverError");
    expect(entry.err.stack).toContain("internal-error.test");
  });
});
