/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * The `agent` target against the real open-source LangGraph JS server (issue 17): the server of
 * `@langchain/langgraph-api` (what `npx @langchain/langgraph-cli dev` runs) is started by this test on a
 * free loopback port with a deterministic graph (test/e2e/langgraph/graph.mjs: no model, no network,
 * tracing off), behind a small proxy; `punctual serve` runs as a process against the proxy. Scenarios:
 * fresh and reused threads, a busy thread's FIFO, cancel, an uncertain launch on a thread of more than
 * 100 runs (the proxy holds the create-run answer past `request_timeout_ms`), and the server killed and
 * restarted mid-run. Every wait polls observable state with a bounded timeout.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { LangGraphJsServer, LangGraphProxy } from "./langgraph-server.js";
import { createToken, startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

const REQUEST_TIMEOUT_MS = 1500;
let dir: string;
let server: LangGraphJsServer;
let proxy: LangGraphProxy;
let serve: CliProcess | null = null;
let base = "";
let token = "";

async function api(method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...headers,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : JSON.parse(text) };
}

const describeAll = (): string =>
  `--- punctual ---\n${serve?.output().slice(-6000) ?? ""}\n--- server ---\n${server.output().slice(-4000)}`;

/** A task that only runs when triggered, on `thread` (a fresh thread per run when absent). */
async function createTask(input: Record<string, unknown>, thread?: string, options = {}) {
  const created = await api("POST", "/v1/tasks", {
    title: `e2e ${String(input["label"])}`,
    schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
    target: { kind: "agent", server: "js", assistant_id: "echo", input },
    context:
      thread === undefined
        ? { mode: "fresh_thread_per_run" }
        : { mode: "reuse_thread", thread_id: thread },
    options,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.task.id as string;
}

async function trigger(taskId: string, key: string) {
  const answer = await api("POST", `/v1/tasks/${taskId}/trigger`, undefined, {
    "idempotency-key": key,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return answer.body.run ?? answer.body;
}

async function runUntil(runId: string, done: (run: any) => boolean, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const { body } = await api("GET", `/v1/runs/${runId}`);
      return done(body) ? body : undefined;
    },
    { timeoutMs, what: `run ${runId} to reach its state`, describe: describeAll },
  );
}

/** The server's runs on `thread`, each with its status and punctual's run id (oldest first). */
async function serverRuns(thread: string): Promise<any[]> {
  const { body } = await server.call("GET", `/threads/${thread}/runs?limit=10000`);
  return body;
}

async function newThread(): Promise<string> {
  const thread = randomUUID();
  const created = await server.call("POST", "/threads", { thread_id: thread });
  expect(created.status).toBe(200);
  return thread;
}

/** The thread's `log`: one label per run of the graph on it. */
async function logOf(thread: string): Promise<string[]> {
  const { body } = await server.call("GET", `/threads/${thread}/state`);
  return body.values?.log ?? [];
}

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-langgraph-js-"));
  server = new LangGraphJsServer(dir);
  await server.start();
  proxy = new LangGraphProxy(() => server.url);
  await proxy.start();
  const db = join(dir, "punctual.db");
  token = await createToken(db, "e2e");
  const servers = [
    { name: "js", url: proxy.url, request_timeout_ms: REQUEST_TIMEOUT_MS, poll_interval_ms: 200 },
  ];
  serve = startCli(["serve", "--database", db, "--port", "0", "--log-level", "info"], {
    cwd: dir,
    env: { PUNCTUAL_AGENT_SERVERS: JSON.stringify(servers) },
  });
  const cli = serve;
  base = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], {
    timeoutMs: 20_000,
    what: "punctual to listen",
    describe: () => cli.output(),
  });
}, 240_000);

afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGTERM");
  await server.kill();
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("agent target on the LangGraph JS server", () => {
  it("runs each occurrence of a fresh-thread task on a new thread the launch creates", async () => {
    const taskId = await createTask({ label: "fresh" });
    const first = await runUntil((await trigger(taskId, "f1")).id, (r) => r.status === "succeeded");
    const second = await runUntil(
      (await trigger(taskId, "f2")).id,
      (r) => r.status === "succeeded",
    );
    expect(first.thread_id).not.toBe(second.thread_id);
    for (const run of [first, second]) {
      const [only, ...others] = await serverRuns(run.thread_id);
      expect(others).toEqual([]);
      expect(only).toMatchObject({ run_id: run.target_run_id, status: "success" });
      expect(only.metadata).toMatchObject({ punctual_run_id: run.id, punctual_attempt: 1 });
      expect(await logOf(run.thread_id)).toEqual(["fresh"]);
    }
  }, 60_000);

  it("queues runs on a reused thread while another client's run holds it, then runs them in order", async () => {
    const thread = await newThread();
    const outside = await server.call("POST", `/threads/${thread}/runs`, {
      assistant_id: "echo",
      input: { label: "outside", sleep_ms: 1500 },
      multitask_strategy: "reject",
    });
    expect(outside.status).toBe(200);
    const taskId = await createTask({ label: "queued" }, thread, { overlap: "buffer_all" });
    const runs = [
      await trigger(taskId, "q1"),
      await trigger(taskId, "q2"),
      await trigger(taskId, "q3"),
    ];
    const done = [];
    for (const run of runs) done.push(await runUntil(run.id, (r) => r.status === "succeeded"));

    // The server's runs on the thread: the outside one, then punctual's in trigger order, one at a time.
    const listed = await serverRuns(thread);
    expect(listed.map((r) => r.metadata.punctual_run_id ?? "outside")).toEqual([
      "outside",
      ...runs.map((r) => r.id),
    ]);
    expect(await logOf(thread)).toEqual(["outside", "queued", "queued", "queued"]);
    const launches = done.map((r) => Date.parse(r.launched_at));
    const ends = done.map((r) => Date.parse(r.finished_at));
    for (let i = 1; i < done.length; i++) expect(launches[i]).toBeGreaterThanOrEqual(ends[i - 1]!);
  }, 60_000);

  it("cancels a running run on the server", async () => {
    const taskId = await createTask({ label: "cancelled", sleep_ms: 60_000 });
    const queued = await trigger(taskId, "c1");
    const running = await runUntil(queued.id, (r) => r.status === "running" && r.target_run_id);
    await waitFor(
      async () => {
        const [run] = await serverRuns(running.thread_id);
        return run?.status === "running" ? true : undefined;
      },
      { timeoutMs: 20_000, what: "the server to run it", describe: describeAll },
    );
    expect((await api("POST", `/v1/runs/${queued.id}/cancel`)).status).toBe(200);
    const cancelled = await runUntil(queued.id, (r) => r.status === "cancelled");
    expect(cancelled.launched_at).not.toBeNull();
    const [onServer] = await serverRuns(running.thread_id);
    expect(onServer.status).toBe("interrupted");
  }, 60_000);

  it("follows an uncertain launch on a thread of more than 100 runs to its verdict, launched once", async () => {
    const thread = await newThread();
    for (let i = 0; i < 105; i++) {
      const seeded = await server.call("POST", `/threads/${thread}/runs`, {
        assistant_id: "echo",
        input: { label: `seed-${i}` },
        multitask_strategy: "enqueue",
      });
      expect(seeded.status).toBe(200);
    }
    await waitFor(
      async () => {
        const listed = await serverRuns(thread);
        return listed.length === 105 && listed.every((r) => r.status === "success")
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, what: "the 105 seeded runs to end", describe: describeAll },
    );
    const taskId = await createTask({ label: "uncertain" }, thread);
    // The server creates (and soon finishes) the run; its answer comes after punctual gave up.
    proxy.holdCreatesMs = REQUEST_TIMEOUT_MS + 2000;
    try {
      const queued = await trigger(taskId, "u1");
      const done = await runUntil(queued.id, (r) => r.status === "succeeded", 40_000);
      const mine = (await serverRuns(thread)).filter(
        (r) => r.metadata.punctual_run_id === queued.id,
      );
      expect(mine).toHaveLength(1);
      expect(done.target_run_id).toBe(mine[0].run_id);
      expect((await logOf(thread)).filter((label) => label === "uncertain")).toHaveLength(1);
      // launched_at is the server's created_at, not the instant the request gave up.
      expect(Math.abs(Date.parse(done.launched_at) - Date.parse(mine[0].created_at))).toBeLessThan(
        1000,
      );
    } finally {
      proxy.holdCreatesMs = 0;
    }
  }, 120_000);

  it("survives the server killed and restarted mid-run: the run times out, nothing runs twice", async () => {
    const taskId = await createTask({ label: "restarted", sleep_ms: 60_000 }, undefined, {
      run_timeout: "PT12S",
    });
    const queued = await trigger(taskId, "r1");
    const running = await runUntil(queued.id, (r) => r.status === "running" && r.target_run_id);
    // Wait until the server has written the running run to disk, then kill it (nothing flushed).
    const ops = join(dir, ".langgraph_api", ".langgraphjs_ops.json");
    await waitFor(
      () => {
        try {
          return readFileSync(ops, "utf8").includes(running.target_run_id) ? true : undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 20_000, what: "the server to persist the run", describe: describeAll },
    );
    await server.kill();
    await server.start();

    // The JS server neither resumes nor fails a run it was executing when it died: the run reads
    // `running` for ever, and punctual ends it at its run_timeout, without launching it again.
    const ended = await runUntil(queued.id, (r) => r.status === "timed_out", 40_000);
    expect(ended.reason).toBe("run_timeout");
    const listed = await serverRuns(running.thread_id);
    expect(listed.filter((r) => r.metadata.punctual_run_id === queued.id)).toHaveLength(1);

    // The restarted server takes new runs as before.
    const after = await createTask({ label: "after-restart" });
    const next = await runUntil((await trigger(after, "r2")).id, (r) => r.status === "succeeded");
    expect(next.target_run_id).not.toBeNull();
  }, 90_000);
});
