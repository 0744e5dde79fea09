/**
 * A fake LangGraph-compatible agent server for tests: a real HTTP server on 127.0.0.1 (port 0) following
 * shared/reference/agent-server-api.md for threads, runs, cancellation and run webhooks, in the three
 * flavors whose answers differ (`python` langgraph-api, the `js` server, `deerflow`). Tests steer it
 * (finish runs, occupy threads, slow or dropped answers) and wait on its state changes, never on time.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Answer, Failure, FakeFlavor, FakeMode, FakeRequest } from "./fake-agent-protocol.js";
import type { FakeListing } from "./fake-agent-protocol.js";
import type {
  FakeRun,
  FakeRunStatus,
  FakeWebhookDelivery,
  FlavorRules,
  Thread,
} from "./fake-agent-protocol.js";
import { deerflowRefusal, FLAVORS, isRecord, now, parse, write } from "./fake-agent-protocol.js";

export type { FakeFlavor, FakeMode, FakeRequest, FakeRun } from "./fake-agent-protocol.js";
export type { FakeListing, FakeRunStatus, FakeWebhookDelivery } from "./fake-agent-protocol.js";

export interface FakeAgentServerOptions {
  /** @default "python" */
  readonly flavor?: FakeFlavor;
  /** When set, every request must carry `X-Api-Key` with this value (else 401). */
  readonly apiKey?: string;
  /** Runs finish with `success` this long after they start running. @default never */
  readonly autoFinishAfterMs?: number;
  /** Assistants the langgraph flavors know (others: 404); DeerFlow accepts any. @default ["agent"] */
  readonly assistants?: readonly string[];
  readonly mode?: FakeMode;
  /** Overrides of the flavor's listing behaviour. */
  readonly listing?: Partial<FakeListing>;
}

const ACTIVE: readonly FakeRunStatus[] = ["pending", "running"];

export class FakeAgentServer {
  readonly flavor: FakeFlavor;
  readonly requests: FakeRequest[] = [];
  readonly webhooks: FakeWebhookDelivery[] = [];
  #url = "";
  #mode: FakeMode;
  readonly #options: FakeAgentServerOptions;
  readonly #rules: FlavorRules;
  readonly #listing: FakeListing;
  readonly #threads = new Map<string, Thread>();
  /** In creation order; listings show them newest first. */
  readonly #runs = new Map<string, FakeRun>();
  readonly #startedAt = new Map<string, string>();
  readonly #busy = new Map<string, string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #deliveries = new Set<Promise<void>>();
  readonly #listeners = new Set<() => void>();
  readonly #server = createServer((req, res) => {
    this.#receive(req, res);
  });

  private constructor(options: FakeAgentServerOptions) {
    this.#options = options;
    this.flavor = options.flavor ?? "python";
    this.#rules = FLAVORS[this.flavor];
    this.#listing = { ...this.#rules.listing, ...options.listing };
    this.#mode = options.mode ?? { kind: "normal" };
  }

  static async start(options: FakeAgentServerOptions = {}): Promise<FakeAgentServer> {
    const fake = new FakeAgentServer(options);
    await new Promise<void>((resolve) => fake.#server.listen(0, "127.0.0.1", resolve));
    fake.#url = `http://127.0.0.1:${(fake.#server.address() as AddressInfo).port}`;
    return fake;
  }

  get url(): string {
    return this.#url;
  }

  setMode(mode: FakeMode): void {
    this.#mode = mode;
  }

  createThread(threadId: string, metadata: Record<string, unknown> = {}): void {
    this.#threads.set(threadId, { thread_id: threadId, metadata, created_at: now() });
  }

  /** The thread's runs, newest first. */
  runsOf(threadId: string): FakeRun[] {
    return [...this.#runs.values()].filter((run) => run.thread_id === threadId).reverse();
  }

  run(runId: string): FakeRun | undefined {
    return this.#runs.get(runId);
  }

  /** Ends an active run as its graph would, calls its webhook and starts the thread's next run. */
  finish(
    runId: string,
    status: Exclude<FakeRunStatus, "pending" | "running">,
    error?: string,
  ): void {
    const run = this.#runs.get(runId);
    if (run === undefined || !ACTIVE.includes(run.status)) return;
    run.status = status;
    run.updated_at = now();
    const reason = error ?? (status === "interrupted" ? "User interrupted the run" : undefined);
    this.#deliver(run, status, reason);
    this.#advance(run.thread_id);
    this.#changed();
  }

  /** Adds `count` finished runs to the thread (created if needed), as another client's history. */
  seedRuns(threadId: string, count: number): void {
    if (!this.#threads.has(threadId)) this.createThread(threadId);
    for (let i = 0; i < count; i++) {
      const run = this.#insert(threadId, { assistant_id: "agent", metadata: { fake: "seeded" } });
      run.status = "success";
    }
  }

  /** Occupies the thread (created if needed) with a running run until `release`. */
  keepBusy(threadId: string): string {
    if (!this.#threads.has(threadId)) this.createThread(threadId);
    const run = this.#insert(threadId, { assistant_id: "agent", metadata: { fake: "keep_busy" } });
    run.status = "running";
    this.#busy.set(threadId, run.run_id);
    return run.run_id;
  }

  release(threadId: string): void {
    const runId = this.#busy.get(threadId);
    this.#busy.delete(threadId);
    if (runId !== undefined) this.finish(runId, "success");
  }

  /** Resolves once `condition` holds, checked after every change; rejects after `timeoutMs`. */
  waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the fake agent server did not reach the condition in ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#listeners.delete(check);
      };
      this.#listeners.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.allSettled([...this.#deliveries]);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.#server.close(() => {
        resolve();
      }),
    );
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      action();
    }, ms);
    this.#timers.add(timer);
  }

  #receive(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const text = Buffer.concat(chunks).toString("utf8");
      const [method, path, headers] = [req.method ?? "GET", url.pathname, req.headers];
      const query = Object.fromEntries(url.searchParams);
      const request = { method, path, query, headers, body: parse(text) };
      this.requests.push(request);
      const mode = this.#mode;
      if (
        mode.kind === "slow_create" &&
        method === "POST" &&
        /^\/threads\/[^/]+\/runs$/.test(path)
      ) {
        // Received now, carried out later: the client may have given up by then.
        this.#later(mode.ms, () => {
          const late = this.#route(request);
          if (!res.destroyed) write(res, late);
          this.#changed();
        });
        this.#changed();
        return;
      }
      const answer = mode.kind === "reply" ? { ...mode } : this.#route(request);
      const answerLater = (): void => {
        write(res, answer);
      };
      if (mode.kind === "drop") res.socket?.destroy();
      else if (mode.kind === "slow") this.#later(mode.ms, answerLater);
      else answerLater();
      this.#changed();
    });
  }

  #fail([status, detail]: Failure): Answer {
    return { status, body: this.#rules.plainErrors ? detail : { detail } };
  }

  #route(request: FakeRequest): Answer {
    const key = this.#options.apiKey;
    if (key !== undefined && request.headers["x-api-key"] !== key) {
      return this.#fail([401, "Invalid API key"]);
    }
    const [root, threadId, ...rest] = request.path.split("/").slice(1).map(decodeURIComponent);
    if (root !== "threads") return this.#fail([404, "Not Found"]);
    if (threadId === undefined && request.method === "POST") return this.#postThread(request.body);
    if (threadId === undefined) return this.#fail([405, "Method Not Allowed"]);
    if (!this.#rules.threadId.test(threadId)) return this.#fail([422, "Invalid thread ID"]);
    const [runs, runId = "", action] = rest;
    const route = [request.method, runs, rest.length > 1 ? ":run" : undefined, action];
    switch (route.filter((part) => part !== undefined).join(" ")) {
      case "GET":
        return this.#getThread(threadId);
      case "POST runs":
        return this.#createRun(threadId, request.body);
      case "GET runs":
        return this.#listRuns(threadId, request.query);
      case "POST history":
        return this.#history(threadId, request.body);
      case "GET runs :run":
        return this.#getRun(threadId, runId);
      case "POST runs :run cancel":
        return this.#cancel(threadId, runId, request.query["action"]);
      default:
        return this.#fail([404, "Not Found"]);
    }
  }

  #postThread(body: unknown): Answer {
    const input = isRecord(body) ? body : {};
    const id = typeof input["thread_id"] === "string" ? input["thread_id"] : randomUUID();
    const existing = this.#threads.get(id);
    // DeerFlow's thread creation is always idempotent; the others raise unless told `do_nothing`.
    if (
      existing !== undefined &&
      this.flavor !== "deerflow" &&
      input["if_exists"] !== "do_nothing"
    ) {
      return this.#fail([409, "Thread already exists"]);
    }
    if (existing === undefined) {
      this.createThread(id, isRecord(input["metadata"]) ? input["metadata"] : {});
    }
    return this.#getThread(id);
  }

  #getThread(threadId: string): Answer {
    const thread = this.#threads.get(threadId);
    if (thread === undefined) return this.#fail([404, `Thread with ID ${threadId} not found`]);
    const busy = this.runsOf(threadId).some((run) => ACTIVE.includes(run.status));
    const status = busy ? "busy" : "idle";
    return { status: 200, body: { ...thread, updated_at: now(), status, values: null } };
  }

  #createRun(threadId: string, body: unknown): Answer {
    if (!isRecord(body)) return this.#fail([this.#rules.invalidBodyStatus, "invalid JSON body"]);
    const refusal = this.#rules.checksAssistant
      ? this.#assistantRefusal(body)
      : deerflowRefusal(body);
    if (refusal !== null) return refusal;
    const strategy = strategyOf(body, this.#rules);
    if (!this.#threads.has(threadId)) {
      const missing = this.#rules.missingThread;
      if (missing !== null && body["if_not_exists"] !== "create") return this.#fail(missing);
      const assistant = body["assistant_id"] ?? null;
      this.createThread(threadId, { graph_id: assistant, assistant_id: assistant });
    }
    const active = this.runsOf(threadId).filter((run) => ACTIVE.includes(run.status));
    if (active.length > 0 && strategy === "reject") return this.#fail(this.#rules.busy(threadId));
    for (const other of active) {
      if (strategy === "interrupt") this.finish(other.run_id, "interrupted");
      if (strategy === "rollback") this.#rollback(other);
    }
    const run = this.#insert(threadId, body);
    this.#later(0, () => {
      this.#advance(threadId);
    });
    const location = `/threads/${threadId}/runs/${run.run_id}`;
    return { status: 200, body: view(run), headers: { "content-location": location } };
  }

  #assistantRefusal(body: Record<string, unknown>): Answer | null {
    const assistant = body["assistant_id"];
    if (typeof assistant !== "string") {
      return this.#fail([this.#rules.invalidBodyStatus, "assistant_id is required"]);
    }
    const known = this.#options.assistants ?? ["agent"];
    return known.includes(assistant) ? null : this.#fail([404, "Thread or assistant not found."]);
  }

  #insert(threadId: string, body: Record<string, unknown>): FakeRun {
    const at = now();
    const webhook = typeof body["webhook"] === "string" ? body["webhook"] : null;
    const run: FakeRun = {
      run_id: randomUUID(),
      thread_id: threadId,
      assistant_id: typeof body["assistant_id"] === "string" ? body["assistant_id"] : null,
      status: "pending",
      metadata: isRecord(body["metadata"]) ? body["metadata"] : {},
      multitask_strategy: strategyOf(body, this.#rules),
      kwargs: { input: body["input"] ?? null, webhook },
      created_at: at,
      updated_at: at,
    };
    this.#runs.set(run.run_id, run);
    return run;
  }

  /** Starts the thread's oldest pending run when none is running (a thread runs one at a time). */
  #advance(threadId: string): void {
    const runs = this.runsOf(threadId);
    const next = runs.filter((run) => run.status === "pending").at(-1);
    if (next === undefined || runs.some((run) => run.status === "running")) return;
    next.status = "running";
    next.updated_at = now();
    this.#startedAt.set(next.run_id, next.updated_at);
    const after = this.#options.autoFinishAfterMs;
    if (after !== undefined) {
      this.#later(after, () => {
        this.finish(next.run_id, "success");
      });
    }
    this.#changed();
  }

  /** `rollback` deletes the run (GET answers 404 afterwards); langgraph-api still posts its webhook. */
  #rollback(run: FakeRun): void {
    this.#runs.delete(run.run_id);
    this.#deliver(run, "rollback", "User requested rollback of the run");
  }

  #listRuns(threadId: string, query: Readonly<Record<string, string>>): Answer {
    if (!this.#threads.has(threadId)) return this.#fail([404, "Thread not found"]);
    const listing = this.#listing;
    const status = listing.statusFilter ? query["status"] : undefined;
    const newest = this.runsOf(threadId).filter(
      (run) => status === undefined || run.status === status,
    );
    const runs = listing.order === "newest" ? newest : newest.reverse();
    const limit = Math.min(listing.maxPage, Number(query["limit"] ?? listing.defaultLimit));
    const offset = listing.offset === "ignored" ? 0 : Number(query["offset"] ?? 0);
    const page =
      listing.offset === "slice" ? runs.slice(offset, limit) : runs.slice(offset, offset + limit);
    return { status: 200, body: page.map(view) };
  }

  /** Checkpoints, newest first: one per run that started, tagged with its metadata and run id. */
  #history(threadId: string, body: unknown): Answer {
    if (!this.#listing.history) return this.#fail([404, "Not Found"]);
    if (!this.#threads.has(threadId)) return this.#fail([404, "Thread not found"]);
    const input = isRecord(body) ? body : {};
    const wanted = isRecord(input["metadata"]) ? input["metadata"] : {};
    const states = this.runsOf(threadId)
      .filter((run) => run.status !== "pending")
      .map((run) => {
        const metadata: Record<string, unknown> = {
          ...run.metadata,
          run_id: run.run_id,
          thread_id: threadId,
        };
        return { values: null, metadata, created_at: this.#startedAt.get(run.run_id) ?? now() };
      })
      .filter((state) =>
        Object.entries(wanted).every(([key, value]) => state.metadata[key] === value),
      );
    return { status: 200, body: states.slice(0, Number(input["limit"] ?? 10)) };
  }

  #getRun(threadId: string, runId: string): Answer {
    const run = this.#runs.get(runId);
    return run?.thread_id === threadId
      ? { status: 200, body: view(run) }
      : this.#fail([404, "Run not found"]);
  }

  #cancel(threadId: string, runId: string, action: string | undefined): Answer {
    const run = this.#runs.get(runId);
    if (run?.thread_id !== threadId) return this.#fail([404, "Run not found"]);
    if (!ACTIVE.includes(run.status)) {
      const status = this.#rules.cancelEndedStatus;
      return status === 202 ? { status } : this.#fail([status, `Run ${runId} is not cancellable`]);
    }
    if (action === "rollback") this.#rollback(run);
    else this.finish(runId, "interrupted");
    this.#advance(threadId);
    return { status: 202 };
  }

  /** POSTs the run webhook: the Run object overlaid with its outcome (reference 6). */
  #deliver(run: FakeRun, status: string, error: string | undefined): void {
    const url = run.kwargs.webhook;
    if (url === null) return;
    const at = now();
    const payload = {
      ...view(run),
      status,
      run_started_at: this.#startedAt.get(run.run_id) ?? at,
      run_ended_at: at,
      webhook_sent_at: at,
      values: null,
      ...(error === undefined ? {} : { error }),
    };
    const contentType = this.#rules.webhookContentType;
    const tracked = fetch(url, {
      method: "POST",
      headers: { "content-type": contentType },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(5000),
    })
      .then(
        (response) => response.status,
        (failure: unknown) => String(failure),
      )
      .then((outcome) => {
        this.webhooks.push({ url, payload, contentType, outcome });
        this.#deliveries.delete(tracked);
        this.#changed();
      });
    this.#deliveries.add(tracked);
  }
}

/** A run as the server shows it. */
function view(run: FakeRun): Record<string, unknown> {
  return { ...run, metadata: { ...run.metadata }, kwargs: { ...run.kwargs } };
}

function strategyOf(body: Record<string, unknown>, rules: FlavorRules): string {
  const strategy = body["multitask_strategy"];
  return typeof strategy === "string" ? strategy : rules.defaultStrategy;
}
