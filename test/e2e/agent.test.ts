/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * The `agent` target end to end (issue 8): `punctual serve` runs as a process on a temporary SQLite file,
 * configured with `PUNCTUAL_AGENT_SERVERS` to call a fake LangGraph-compatible server in this test
 * (test/helpers/fake-agent-server.ts). Scenarios: a reuse-thread task firing every 2 s against a thread
 * the server keeps busy is queued, then launched in FIFO order once the thread frees; a launch whose
 * connection drops after the server created the run is reconciled without a second run; a fresh-thread
 * task gets a new thread each run. Completion comes from the server's run webhook and from polling.
 * Every wait polls observable state with a bounded timeout.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeAgentServer } from "../helpers/fake-agent-server.js";
import type { FakeRun } from "../helpers/fake-agent-server.js";
import { ensureBuilt } from "./build.js";
import { createToken, startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

let dir: string;
let fake: FakeAgentServer;
let serve: CliProcess | null = null;
let base = "";
let token = "";

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : JSON.parse(text) };
}

async function runsOfTask(taskId: string): Promise<any[]> {
  const page = await api("GET", `/v1/tasks/${taskId}/runs?limit=200`);
  return [...page.body.items].reverse();
}

/** The server's runs launched by punctual (not the fake's own busy runs), oldest first. */
function punctualRuns(threadId: string): FakeRun[] {
  return fake
    .runsOf(threadId)
    .filter((r) => typeof r.metadata["punctual_run_id"] === "string")
    .reverse();
}

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-agent-e2e-"));
  fake = await FakeAgentServer.start({ flavor: "python", autoFinishAfterMs: 300 });
  const db = join(dir, "punctual.db");
  token = await createToken(db, "e2e");
  const servers = [
    { name: "lab", url: fake.url, request_timeout_ms: 2000, poll_interval_ms: 250 },
    // The same server, as one that calls no run webhooks: completion and reconciliation by polling.
    {
      name: "quiet",
      url: fake.url,
      webhooks: false,
      request_timeout_ms: 2000,
      poll_interval_ms: 250,
    },
  ];
  serve = startCli(["serve", "--database", db, "--port", "0", "--log-level", "info"], {
    cwd: dir,
    env: { PUNCTUAL_AGENT_SERVERS: JSON.stringify(servers) },
  });
  const cli = serve;
  base = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], {
    timeoutMs: 20_000,
    what: "the server to listen",
    describe: () => cli.output(),
  });
}, 240_000);

afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGTERM");
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("agent target, end to end", () => {
  it("queues a reuse-thread task's runs while the thread is busy, then launches them in FIFO order", async () => {
    const thread = randomUUID();
    fake.keepBusy(thread);
    const task = await api("POST", "/v1/tasks", {
      title: "every 2 s on a busy thread",
      schedule: { type: "cron", cron: "*/2 * * * * *" },
      target: { kind: "agent", server: "lab", assistant_id: "agent", input: { messages: [] } },
      context: { mode: "reuse_thread", thread_id: thread },
      options: { overlap: "buffer_all" },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const id: string = task.body.task.id;

    // Three occurrences wait in the queue; the server was asked at most for the first (busy: 409).
    await waitFor(
      async () =>
        (await runsOfTask(id)).filter((r) => r.status === "queued").length >= 3 ? true : undefined,
      { timeoutMs: 20_000, what: "three queued runs", describe: () => serve?.output() ?? "" },
    );
    expect(punctualRuns(thread)).toHaveLength(0);
    const waiting = (await runsOfTask(id)).filter((r) => r.status === "queued");

    fake.release(thread);
    await waitFor(
      async () => {
        const runs = await runsOfTask(id);
        return waiting.every((w) => runs.find((r) => r.id === w.id)?.status === "succeeded")
          ? true
          : undefined;
      },
      {
        timeoutMs: 30_000,
        what: "the queued runs to succeed",
        describe: () => serve?.output() ?? "",
      },
    );
    await api("POST", `/v1/tasks/${id}/pause`);

    const launched = punctualRuns(thread);
    const order = launched.map((r) => r.metadata["punctual_run_id"]);
    // Each run once, the waiting ones first and in their queue order.
    expect(new Set(order).size).toBe(order.length);
    expect(order.slice(0, waiting.length)).toEqual(waiting.map((w) => w.id));
    const occurrences = launched.map((r) => String(r.metadata["punctual_occurrence"]));
    expect([...occurrences].sort()).toEqual(occurrences);
    for (const r of launched) expect(r.multitask_strategy).toBe("reject");
    // Never two runs of the thread at once on the server.
    const finished = await runsOfTask(id);
    for (const w of waiting) {
      const mine = finished.find((r) => r.id === w.id);
      expect(mine.target_run_id).toBe(
        launched.find((l) => l.metadata["punctual_run_id"] === w.id)?.run_id,
      );
      expect(mine.thread_id).toBe(thread);
    }
  }, 60_000);

  it("reconciles a launch whose connection dropped, without a second run on the server", async () => {
    const task = await api("POST", "/v1/tasks", {
      title: "dropped launch",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "agent", server: "quiet", assistant_id: "agent", input: { q: "hi" } },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const id: string = task.body.task.id;
    fake.setMode({ kind: "drop" });
    const triggered = await api("POST", `/v1/tasks/${id}/trigger`);
    const runId: string = triggered.body.id;
    const thread: string = triggered.body.thread_id;
    // The server created the run, then dropped the connection before answering.
    await fake.waitFor(() => punctualRuns(thread).length === 1, 15_000);
    fake.setMode({ kind: "normal" });

    const done = await waitFor(
      async () => {
        const current = await api("GET", `/v1/runs/${runId}`);
        return current.body.status === "succeeded" ? current.body : undefined;
      },
      {
        timeoutMs: 30_000,
        what: "the uncertain run to be reconciled and succeed",
        describe: () => serve?.output() ?? "",
      },
    );
    const onServer = punctualRuns(thread);
    expect(onServer).toHaveLength(1);
    expect(onServer[0]!.metadata["punctual_run_id"]).toBe(runId);
    expect(done).toMatchObject({ attempt: 1, target_run_id: onServer[0]!.run_id });
    const posts = fake.requests.filter(
      (r) => r.method === "POST" && r.path === `/threads/${thread}/runs`,
    );
    expect(posts).toHaveLength(1);
  }, 60_000);

  it("gives a fresh-thread task a new thread each run, created by the launch", async () => {
    const task = await api("POST", "/v1/tasks", {
      title: "fresh threads",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "agent", server: "lab", assistant_id: "agent", input: null },
      context: { mode: "fresh_thread_per_run" },
      options: { overlap: "allow_all" },
    });
    const id: string = task.body.task.id;
    const first = await api("POST", `/v1/tasks/${id}/trigger`);
    const second = await api("POST", `/v1/tasks/${id}/trigger`);
    expect([first.status, second.status]).toEqual([202, 202]);
    const runIds = [first.body.id, second.body.id];
    await waitFor(
      async () => {
        const runs = await Promise.all(runIds.map((r) => api("GET", `/v1/runs/${r}`)));
        return runs.every((r) => r.body.status === "succeeded")
          ? runs.map((r) => r.body)
          : undefined;
      },
      {
        timeoutMs: 30_000,
        what: "both fresh-thread runs to succeed",
        describe: () => serve?.output() ?? "",
      },
    );
    const threads = runIds.map(
      (r) =>
        fake.requests.find(
          (q) =>
            q.method === "POST" && q.path.endsWith("/runs") && JSON.stringify(q.body).includes(r),
        )?.path,
    );
    expect(new Set(threads).size).toBe(2);
    for (const [i, runId] of runIds.entries()) {
      expect(threads[i]).toBe(`/threads/${runId}/runs`);
      expect(punctualRuns(runId)).toHaveLength(1);
    }
  }, 60_000);

  it("refuses a task naming an unconfigured server or a thread the server does not have", async () => {
    const unknownServer = await api("POST", "/v1/tasks", {
      title: "nowhere",
      schedule: { type: "cron", cron: "0 0 1 1 *" },
      target: { kind: "agent", server: "elsewhere", assistant_id: "agent", input: null },
    });
    expect(unknownServer.status).toBe(422);
    expect(JSON.stringify(unknownServer.body)).toContain("elsewhere");
    const missingThread = await api("POST", "/v1/tasks", {
      title: "no such thread",
      schedule: { type: "cron", cron: "0 0 1 1 *" },
      target: { kind: "agent", server: "lab", assistant_id: "agent", input: null },
      context: { mode: "reuse_thread", thread_id: randomUUID() },
    });
    expect(missingThread.status).toBe(404);
  }, 60_000);
});
