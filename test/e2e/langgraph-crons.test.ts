/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * LangGraph's crons API (issue 31, docs/targets.md#langgraph-crons) driven by the official SDK
 * (`@langchain/langgraph-sdk`'s `client.crons`, unchanged) against `punctual serve --langgraph-api js`
 * launching on the real open-source LangGraph JS server (test/e2e/langgraph-server.ts, the deterministic
 * graph of test/e2e/langgraph/). Thread and stateless crons, `on_run_completed`, search, count, update,
 * pause, delete and owner isolation; and `--langgraph-proxy`: one SDK client for threads and a streamed
 * run as well, each owner reaching only its own threads. Every wait polls observable state with a
 * bounded timeout.
 */
import { Client } from "@langchain/langgraph-sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { LangGraphJsServer } from "./langgraph-server.js";
import { createToken, startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

let dir: string;
let server: LangGraphJsServer;
let serve: CliProcess | null = null;
let base = "";
let tokenA = "";
let tokenB = "";
/** The SDK pointed at punctual, as owner `alice` and owner `bob`. */
let alice: Client;
let bob: Client;
/** The SDK pointed at the LangGraph server itself (threads and their state). */
let direct: Client;

const describeAll = (): string =>
  `--- punctual ---\n${serve?.output().slice(-6000) ?? ""}\n--- server ---\n${server.output().slice(-3000)}`;

/** punctual's own API, with a bearer token. */
async function v1(method: string, path: string, token = tokenA, body?: unknown) {
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

/** The cron's runs in punctual's history that ended `succeeded`, oldest first. */
async function succeededRuns(cronId: string): Promise<any[]> {
  const { body } = await v1("GET", `/v1/tasks/${cronId}/runs?limit=200`);
  return (body.items as any[]).filter((run) => run.status === "succeeded").reverse();
}

async function threadStatus(thread: string): Promise<number> {
  const response = await fetch(`${server.url}/threads/${thread}`);
  await response.text();
  return response.status;
}

async function logOf(thread: string): Promise<string[]> {
  const state = await direct.threads.getState<{ log?: string[] }>(thread);
  return state.values.log ?? [];
}

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-langgraph-crons-"));
  server = new LangGraphJsServer(dir);
  await server.start();
  const db = join(dir, "punctual.db");
  tokenA = await createToken(db, "alice");
  tokenB = await createToken(db, "bob");
  const servers = [
    { name: "js", url: server.url, request_timeout_ms: 5000, poll_interval_ms: 200 },
  ];
  serve = startCli(
    [
      ...["serve", "--database", db, "--port", "0", "--log-level", "info"],
      ...["--langgraph-api", "js", "--langgraph-proxy"],
    ],
    { cwd: dir, env: { PUNCTUAL_AGENT_SERVERS: JSON.stringify(servers) } },
  );
  const cli = serve;
  base = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], {
    timeoutMs: 20_000,
    what: "punctual to listen",
    describe: () => cli.output(),
  });
  const apiUrl = `${base}/langgraph/js`;
  alice = new Client({ apiUrl, apiKey: tokenA, callerOptions: { maxRetries: 0 } });
  bob = new Client({ apiUrl, apiKey: tokenB, callerOptions: { maxRetries: 0 } });
  direct = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
}, 240_000);

afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGTERM");
  await server.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe("LangGraph's crons API through the official SDK", () => {
  it("runs a thread cron on its thread with the stored payload until it is paused", async () => {
    const thread = await direct.threads.create();
    const cron = await alice.crons.createForThread(thread.thread_id, "echo", {
      schedule: "* * * * * *",
      input: { label: "tick" },
      metadata: { team: "a" },
      config: { tags: ["nightly"] },
    });
    expect(cron).toMatchObject({
      assistant_id: "echo",
      thread_id: thread.thread_id,
      schedule: "* * * * * *",
      timezone: "UTC",
      user_id: "alice",
      metadata: { team: "a" },
      enabled: true,
      end_time: null,
      payload: {
        assistant_id: "echo",
        input: { label: "tick" },
        metadata: { team: "a" },
        config: { tags: ["nightly"] },
        multitask_strategy: "enqueue",
      },
    });
    expect(Date.parse(cron.next_run_date)).toBeGreaterThan(Date.parse(cron.created_at) - 1000);

    const log = await waitFor(
      async () => {
        const entries = await logOf(thread.thread_id);
        return entries.length >= 2 ? entries : undefined;
      },
      { timeoutMs: 30_000, what: "two ticks on the thread", describe: describeAll },
    );
    expect(new Set(log)).toEqual(new Set(["tick"]));
    const runs = await direct.runs.list(thread.thread_id);
    expect(runs[0]?.metadata).toMatchObject({ team: "a", punctual_task_id: cron.cron_id });

    // A cron is a punctual agent task: punctual's API sees it, with its history.
    const task = await v1("GET", `/v1/tasks/${cron.cron_id}`);
    expect(task.body).toMatchObject({
      owner: "alice",
      target: { kind: "agent", server: "js", assistant_id: "echo", metadata: { team: "a" } },
      context: { mode: "reuse_thread", thread_id: thread.thread_id },
      options: { overlap: "buffer_all" },
    });

    const paused = await alice.crons.update(cron.cron_id, { enabled: false });
    expect(paused).toMatchObject({ cron_id: cron.cron_id, enabled: false, next_run_date: null });
    expect((await v1("GET", `/v1/tasks/${cron.cron_id}`)).body.status).toBe("paused");
    const resumed = await alice.crons.update(cron.cron_id, { enabled: true });
    expect(resumed.enabled).toBe(true);
    await alice.crons.delete(cron.cron_id);
    expect((await v1("GET", `/v1/tasks/${cron.cron_id}`)).status).toBe(404);
  }, 90_000);

  it("runs a stateless cron on a fresh thread each time, deleted after the run unless kept", async () => {
    const kept = await alice.crons.create("echo", {
      schedule: "* * * * * *",
      input: { label: "kept" },
      onRunCompleted: "keep",
    });
    expect(kept).toMatchObject({ thread_id: null, on_run_completed: "keep" });
    const dropped = await alice.crons.create("echo", {
      schedule: "* * * * * *",
      input: { label: "dropped" },
    });
    expect(dropped).toMatchObject({ thread_id: null, on_run_completed: "delete" });

    const keptRun = await waitFor(async () => (await succeededRuns(kept.cron_id))[0], {
      timeoutMs: 30_000,
      what: "a run of the kept cron",
      describe: describeAll,
    });
    // A run of the other cron that ended after it has had its thread deleted...
    const droppedRun = await waitFor(
      async () => {
        for (const run of await succeededRuns(dropped.cron_id)) {
          if (run.finished_at > keptRun.finished_at && (await threadStatus(run.thread_id)) === 404)
            return run;
        }
        return undefined;
      },
      { timeoutMs: 30_000, what: "a deleted thread of the dropped cron", describe: describeAll },
    );
    expect(droppedRun.target_run_id).not.toBeNull();
    // ... while the kept one's thread is still there, with what its run did.
    expect(await logOf(keptRun.thread_id)).toEqual(["kept"]);

    for (const cron of [kept, dropped]) await alice.crons.delete(cron.cron_id);
  }, 90_000);

  it("searches and counts the owner's crons by assistant, thread, enabled and metadata", async () => {
    const thread = await direct.threads.create();
    const yearly = { schedule: "0 9 1 1 *", timezone: "Europe/Berlin" };
    const one = await alice.crons.create("echo", { ...yearly, metadata: { team: "x", n: 1 } });
    const two = await alice.crons.create("echo", { ...yearly, metadata: { team: "x", n: 2 } });
    const three = await alice.crons.createForThread(thread.thread_id, "echo", {
      ...yearly,
      metadata: { team: "y" },
      enabled: false,
    });
    expect((three as unknown as { enabled: boolean }).enabled).toBe(false);
    // 09:00 in Berlin on January 1st is 08:00 UTC.
    expect(one.next_run_date).toMatch(/^\d{4}-01-01T08:00:00(\.000)?Z$/);

    const byTeam = await alice.crons.search({ metadata: { team: "x" }, sortBy: "created_at" });
    expect(byTeam.map((c) => c.cron_id)).toEqual([two.cron_id, one.cron_id]);
    const ascending = await alice.crons.search({
      metadata: { team: "x" },
      sortBy: "created_at",
      sortOrder: "asc",
      limit: 1,
      offset: 1,
    });
    expect(ascending.map((c) => c.cron_id)).toEqual([two.cron_id]);
    const onThread = await alice.crons.search({ threadId: thread.thread_id });
    expect(onThread.map((c) => c.cron_id)).toEqual([three.cron_id]);
    const disabled = await alice.crons.search({ enabled: false });
    expect(disabled.map((c) => c.cron_id)).toEqual([three.cron_id]);
    const selected = await alice.crons.search({
      metadata: { n: 2 },
      select: ["cron_id", "schedule"],
    });
    expect(selected).toEqual([{ cron_id: two.cron_id, schedule: "0 9 1 1 *" }]);
    expect(await alice.crons.count({ metadata: { team: "x" } })).toBe(2);
    expect(await alice.crons.count({ assistantId: "echo", threadId: thread.thread_id })).toBe(1);
    expect(await alice.crons.count({ assistantId: "nobody" })).toBe(0);

    const updated = await alice.crons.update(one.cron_id, {
      schedule: "30 7 * * 1-5",
      timezone: "America/New_York",
      endTime: "2099-01-01T00:00:00Z",
      input: { label: "weekday" },
      metadata: { team: "z" },
    });
    expect(updated).toMatchObject({
      schedule: "30 7 * * 1-5",
      timezone: "America/New_York",
      end_time: "2099-01-01T00:00:00Z",
      metadata: { team: "z" },
      payload: { input: { label: "weekday" } },
    });
    const cleared = await alice.crons.update(one.cron_id, { endTime: null });
    expect(cleared.end_time).toBeNull();

    // Owners never see each other's crons.
    expect(await bob.crons.search({})).toEqual([]);
    expect(await bob.crons.count({})).toBe(0);
    await expect(bob.crons.update(one.cron_id, { enabled: false })).rejects.toThrow(/404/);
    await expect(bob.crons.delete(one.cron_id)).rejects.toThrow(/404/);
    await expect(
      bob.crons.createForThread(thread.thread_id, "echo", { schedule: "0 9 * * *" }),
    ).resolves.toMatchObject({ user_id: "bob" });

    // The bearer form of the token works too.
    const bearer = await fetch(`${base}/langgraph/js/runs/crons/count`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokenA}`, "content-type": "application/json" },
      body: JSON.stringify({ metadata: { team: "y" } }),
    });
    expect(await bearer.json()).toBe(1);
    const anonymous = await fetch(`${base}/langgraph/js/runs/crons/count`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(anonymous.status).toBe(401);

    for (const cron of [one, two, three]) await alice.crons.delete(cron.cron_id);
    expect(await alice.crons.count({})).toBe(0);
  }, 60_000);

  it("refuses what it cannot honour with LangGraph's 4xx answers", async () => {
    await expect(alice.crons.create("echo", { schedule: "not a cron" })).rejects.toThrow(
      /422.*schedule/s,
    );
    await expect(
      alice.crons.create("echo", { schedule: "0 9 * * *", webhook: "https://example.com/hook" }),
    ).rejects.toThrow(/422.*webhook/s);
    await expect(
      alice.crons.createForThread("00000000-0000-4000-8000-000000000000", "echo", {
        schedule: "0 9 * * *",
      }),
    ).rejects.toThrow(/404/);
    await expect(alice.crons.update("no-such-cron", { enabled: false })).rejects.toThrow(/404/);
  }, 30_000);
});

describe("one SDK client for everything through --langgraph-proxy", () => {
  it("streams a run on a thread the owner made through the proxy", async () => {
    const thread = await alice.threads.create({ metadata: { purpose: "proxy" } });
    expect(thread.metadata).toMatchObject({ purpose: "proxy", punctual_owner: "alice" });
    const events: string[] = [];
    let last: any = null;
    for await (const chunk of alice.runs.stream(thread.thread_id, "echo", {
      input: { label: "streamed" },
      streamMode: "values",
    })) {
      events.push(chunk.event);
      if (chunk.event === "values") last = chunk.data;
    }
    expect(events).toContain("metadata");
    expect(last?.log).toEqual(["streamed"]);
    expect((await alice.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    const assistants = await alice.assistants.search({ graphId: "echo" });
    expect(assistants.length).toBeGreaterThan(0);
    // Crons are still punctual's, under the same client.
    expect(await alice.crons.count({ threadId: thread.thread_id })).toBe(0);
  }, 60_000);

  it("keeps each owner to its own threads and refuses what is not listed", async () => {
    const mine = await alice.threads.create();
    const outside = await direct.threads.create();
    for (const id of [mine.thread_id, outside.thread_id]) {
      await expect(bob.threads.get(id)).rejects.toThrow(/404/);
      await expect(bob.runs.create(id, "echo", { input: { label: "x" } })).rejects.toThrow(/404/);
    }
    const found = await bob.threads.search({ limit: 100 });
    expect(found.map((t) => t.thread_id)).not.toContain(mine.thread_id);
    expect(found.map((t) => t.thread_id)).not.toContain(outside.thread_id);
    // Naming another owner's thread at create does not hand it over.
    await expect(
      bob.threads.create({ threadId: mine.thread_id, ifExists: "do_nothing" }),
    ).rejects.toThrow(/409/);
    await expect(alice.assistants.create({ graphId: "echo" })).rejects.toThrow(/403/);
    await expect(alice.store.listNamespaces()).rejects.toThrow(/403/);
    const anonymous = await fetch(`${base}/langgraph/js/threads/${mine.thread_id}`);
    expect(anonymous.status).toBe(401);
  }, 30_000);
});
