/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * The callback routes cost a stranger nothing (docs/security.md#callback-routes): the server name, run
 * and token are checked before more than a small prefix of the body is read (counted as the bytes the
 * server pulled from the request stream, not as a time), callbacks are rate limited per client address,
 * and an address's failed attempts (401, a callback's 404) are throttled with 429 and Retry-After.
 */
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { callbackToken } from "../../../src/adapters/callbacks/callback-tokens.js";
import { addressKey } from "../../../src/adapters/http/rate-limit.js";
import { call, CRON_TASK, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

/** A JSON body of `size` bytes, produced only as the server pulls it; `pulled` counts what it took. */
function countingBody(size: number): { stream: Readable; pulled: () => number } {
  const head = Buffer.from('{"status":"succeeded","result":"');
  const tail = Buffer.from('"}');
  let sent = 0;
  const stream = new Readable({
    highWaterMark: 1024,
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      let chunk: Buffer;
      if (sent === 0) chunk = head;
      else if (sent + 4096 + tail.length >= size)
        chunk = Buffer.concat([Buffer.alloc(size - sent - tail.length, 120), tail]);
      else chunk = Buffer.alloc(4096, 120);
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => sent };
}

/** A webhook task's triggered run (queued: no coordinator) and its completion token. */
async function webhookRun(server: TestServer): Promise<{ runId: string; token: string }> {
  const owner = await server.token("alice");
  const created = await call(server.url, "POST", "/v1/tasks", {
    token: owner,
    body: { ...CRON_TASK, target: { kind: "webhook", url: "https://hooks.example/job" } },
  });
  const run = await call(server.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
    token: owner,
  });
  const runId: string = run.body.id;
  const secret: string = created.body.task.webhook_secret;
  return { runId, token: callbackToken(secret, "complete", runId) };
}

const BIG = 8 * 1024 * 1024;
const SMALL_PREFIX = 64 * 1024;

describe("callbacks refuse before reading the body", () => {
  it("reads at most a small prefix of an 8 MiB /complete with a wrong token", async () => {
    t = await startTestServer();
    const { runId } = await webhookRun(t);
    const body = countingBody(BIG);
    const answer = await t.server.app.inject({
      method: "POST",
      url: `/v1/runs/${runId}/complete?token=wrong`,
      headers: { "content-type": "application/json", "content-length": String(BIG) },
      payload: body.stream,
    });
    expect(answer.statusCode).toBe(404);
    expect(answer.headers.connection).toBe("close");
    expect(body.pulled()).toBeLessThan(SMALL_PREFIX);
  });

  it("reads at most a small prefix of an 8 MiB agent hook naming an unknown server or run", async () => {
    t = await startTestServer();
    const { runId, token } = await webhookRun(t);
    for (const url of [
      `/v1/hooks/agent/nobody?run=${runId}&token=${token}`,
      `/v1/hooks/agent/main?run=run_unknown&token=abc`,
    ]) {
      const body = countingBody(BIG);
      const answer = await t.server.app.inject({
        method: "POST",
        url,
        headers: { "content-type": "application/json", "content-length": String(BIG) },
        payload: body.stream,
      });
      expect(answer.statusCode).toBe(404);
      expect(body.pulled()).toBeLessThan(SMALL_PREFIX);
    }
  });

  it("does read the body once the token opens the run (the counter counts)", async () => {
    t = await startTestServer();
    const { runId, token } = await webhookRun(t);
    const size = 900 * 1024;
    const body = countingBody(size);
    const answer = await t.server.app.inject({
      method: "POST",
      url: `/v1/runs/${runId}/complete?token=${token}`,
      headers: { "content-type": "application/json", "content-length": String(size) },
      payload: body.stream,
    });
    // Read whole, then refused for what it says: a result over 64 KiB.
    expect(answer.statusCode).toBe(422);
    expect(answer.json()).toMatchObject({ limit: "result" });
    expect(body.pulled()).toBe(size);
  });
});

describe("per-address limits", () => {
  it("rate limits the callback routes per client address (429 with Retry-After)", async () => {
    t = await startTestServer({
      rateLimit: {},
      addressLimits: { callbacks: { burst: 3, perSecond: 0.01 }, failures: { burst: 100 } },
    });
    const { runId, token } = await webhookRun(t);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i++) {
      const answer = await call(t.url, "POST", `/v1/runs/${runId}/complete?token=${token}`, {
        body: { status: "succeeded" },
      });
      statuses.push(answer.status);
      retryAfter = answer.headers.get("retry-after");
    }
    expect(statuses).toEqual([409, 409, 409, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });

  it("throttles an address's flood of bad tokens, before looking the token up", async () => {
    t = await startTestServer({
      rateLimit: {},
      addressLimits: { failures: { burst: 3, perSecond: 0.01 } },
    });
    const good = await t.token("alice");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await call(t.url, "GET", "/v1/tasks", { token: `pct_wrong${i}` })).status);
    }
    const throttled = await call(t.url, "GET", "/v1/tasks", { token: "pct_wrong" });
    // The address is throttled as a whole: a good token from it waits too.
    const alsoGood = await call(t.url, "GET", "/v1/tasks", { token: good });
    expect(statuses).toEqual([401, 401, 401]);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(alsoGood.status).toBe(429);
    // Health probes are not behind it.
    expect((await call(t.url, "GET", "/healthz")).status).toBe(200);
  });

  it("counts a callback's wrong tokens as failures of the address", async () => {
    t = await startTestServer({
      rateLimit: {},
      addressLimits: { failures: { burst: 2, perSecond: 0.01 } },
    });
    const { runId } = await webhookRun(t);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call(t.url, "POST", `/v1/runs/${runId}/complete?token=bad${i}`, {
        body: { status: "succeeded" },
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([404, 404, 429]);
  });

  it("keys IPv4 by address and IPv6 by its /64", () => {
    expect(addressKey("203.0.113.9")).toBe("203.0.113.9");
    expect(addressKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:db8:1:2:bbbb::9"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
  });
});
