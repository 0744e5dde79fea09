/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * One limits module (src/application/policy/limits.ts, docs/security.md#input-limits): the library and the HTTP
 * API accept and refuse exactly the same tasks and queries. Every case runs through both surfaces, and
 * the two answers must agree: accepted by both, or refused by both naming the same limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { createScheduler } from "../../src/composition.js";
import type { Scheduler } from "../../src/composition.js";
import { memoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { isPunctualError, LimitExceededError } from "../../src/domain/errors.js";
import {
  DEFAULT_LIMITS,
  jsonBytes,
  jsonDepth,
  jsonTextDepth,
} from "../../src/application/policy/limits.js";
import { call, CRON_TASK, startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

/** A JSON string of exactly `bytes` bytes once serialised. */
function inputOf(bytes: number): string {
  return "x".repeat(bytes - 2);
}

type Outcome = "accepted" | `refused ${string}`;

let library: Scheduler;
let http: TestServer;
let token: string;
let libraryTaskId: string;
let httpTaskId: string;

async function viaLibrary(action: () => Promise<unknown>): Promise<Outcome> {
  try {
    await action();
    return "accepted";
  } catch (error) {
    if (error instanceof LimitExceededError) return `refused ${error.code} ${error.limit}`;
    if (isPunctualError(error)) return `refused ${error.code}`;
    throw error;
  }
}

async function viaHttp(method: string, path: string, body?: unknown): Promise<Outcome> {
  const headers: Record<string, string> = method === "PATCH" ? { "if-match": "*" } : {};
  const answer = await call(http.url, method, path, {
    token,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  if (answer.status < 300) return "accepted";
  const type = String(answer.body.type).split("/").pop() ?? "";
  const code = type.replaceAll("-", "_");
  return code === "limit_exceeded"
    ? `refused ${code} ${String(answer.body.limit)}`
    : `refused ${code}`;
}

beforeAll(async () => {
  library = createScheduler({ store: memoryStore() });
  http = await startTestServer();
  token = await http.token("alice");
  libraryTaskId = (await library.tasks.create(CRON_TASK)).task.id;
  httpTaskId = (await call(http.url, "POST", "/v1/tasks", { token, body: CRON_TASK })).body.task.id;
});

afterAll(async () => {
  await library.stop();
  await http.stop();
});

describe("the limits, through the library and the HTTP API alike", () => {
  const max = DEFAULT_LIMITS.targetInputBytes;

  it.each([
    ["exactly the limit", max, "accepted"],
    ["one byte over", max + 1, "refused limit_exceeded target_input"],
  ])("a target input of %s on create", async (_label, bytes, expected) => {
    const body = { ...CRON_TASK, target: { kind: "handler", name: "log", input: inputOf(bytes) } };
    expect(await viaLibrary(() => library.tasks.create(body))).toBe(expected);
    expect(await viaHttp("POST", "/v1/tasks", body)).toBe(expected);
  });

  it.each([
    ["exactly the limit", max, "accepted"],
    ["one byte over", max + 1, "refused limit_exceeded target_input"],
  ])("a target input of %s on edit", async (_label, bytes, expected) => {
    const patch = { target: { kind: "handler", name: "log", input: inputOf(bytes) } };
    expect(await viaLibrary(() => library.tasks.update(libraryTaskId, patch))).toBe(expected);
    expect(await viaHttp("PATCH", `/v1/tasks/${httpTaskId}`, patch)).toBe(expected);
  });

  it.each([
    [1, "accepted"],
    [200, "accepted"],
    [201, "refused limit_exceeded page_size"],
    [0, "refused limit_exceeded page_size"],
  ])("a page of %i tasks and of %i runs", async (limit, expected) => {
    expect(await viaLibrary(() => library.tasks.list({ limit }))).toBe(expected);
    expect(await viaHttp("GET", `/v1/tasks?limit=${limit}`)).toBe(expected);
    expect(await viaLibrary(() => library.tasks.runs(libraryTaskId, { limit }))).toBe(expected);
    expect(await viaHttp("GET", `/v1/tasks/${httpTaskId}/runs?limit=${limit}`)).toBe(expected);
  });

  it.each([
    [100, "accepted"],
    [101, "refused validation_failed"],
  ])("a preview of %i fires", async (count, expected) => {
    expect(await viaLibrary(() => library.tasks.preview(libraryTaskId, count))).toBe(expected);
    expect(await viaHttp("GET", `/v1/tasks/${httpTaskId}/preview?count=${count}`)).toBe(expected);
  });

  it.each([
    ["PT24H", "accepted"],
    ["PT24H1S", "refused limit_exceeded run_timeout"],
    ["P3650D", "refused limit_exceeded run_timeout"],
  ])("a run_timeout of %s on create, edit and batch create", async (timeout, expected) => {
    const body = { ...CRON_TASK, options: { run_timeout: timeout } };
    expect(await viaLibrary(() => library.tasks.create(body))).toBe(expected);
    expect(await viaHttp("POST", "/v1/tasks", body)).toBe(expected);
    expect(await viaLibrary(() => library.tasks.createMany([body]))).toBe(expected);
    const patch = { options: { run_timeout: timeout } };
    expect(await viaLibrary(() => library.tasks.update(libraryTaskId, patch))).toBe(expected);
    expect(await viaHttp("PATCH", `/v1/tasks/${httpTaskId}`, patch)).toBe(expected);
  });

  it("lets the operator lower the run_timeout maximum, and keeps a stored task over it working", async () => {
    const dir = mkdtempSync(join(tmpdir(), "punctual-limits-"));
    const file = join(dir, "limits.db");
    const before = createScheduler({ store: sqlite(file) });
    const created = await before.tasks.create({ ...CRON_TASK, options: { run_timeout: "PT2H" } });
    await before.stop();
    const lowered = createScheduler({
      store: sqlite(file),
      policy: { maxRunTimeoutSeconds: 3600 },
    });
    // An edit that leaves run_timeout alone is taken; one that names a timeout over the limit is not.
    expect(
      await viaLibrary(() => lowered.tasks.update(created.task.id, { title: "renamed" })),
    ).toBe("accepted");
    expect(
      await viaLibrary(() =>
        lowered.tasks.update(created.task.id, { options: { run_timeout: "PT90M" } }),
      ),
    ).toBe("refused limit_exceeded run_timeout");
    await lowered.stop();
    rmSync(dir, { recursive: true, force: true });
  });
});

/** `depth` nested arrays (built without recursion). */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("JSON depth and storable text, through the library and the HTTP API alike", () => {
  const withInput = (input: unknown) => ({
    ...CRON_TASK,
    target: { kind: "handler", name: "log", input },
  });

  it.each([
    // The body's own two levels (the task, its target) count: input 62 deep is 64 in all.
    ["62 deep", 62, "accepted"],
    ["63 deep", 63, "refused limit_exceeded json_depth"],
    ["1,001 deep", 1_001, "refused limit_exceeded json_depth"],
    ["100,000 deep", 100_000, "refused limit_exceeded json_depth"],
  ])("a target input %s on create", async (_label, depth, expected) => {
    const body = withInput(nested(depth));
    expect(await viaLibrary(() => library.tasks.create(body as never))).toBe(expected);
    // Sent as text: JSON.stringify itself cannot write 100,000 levels.
    const raw = JSON.stringify(withInput("HOLE")).replace(
      '"HOLE"',
      `${"[".repeat(depth)}1${"]".repeat(depth)}`,
    );
    const answer = await call(http.url, "POST", "/v1/tasks", {
      token,
      raw,
      headers: { "content-type": "application/json" },
    });
    const outcome =
      answer.status < 300 ? "accepted" : `refused limit_exceeded ${String(answer.body.limit)}`;
    expect(outcome).toBe(expected);
  });

  it("a cyclic input given to the library is refused as too deep, not a RangeError", async () => {
    const cycle: Record<string, unknown> = {};
    cycle["self"] = cycle;
    expect(await viaLibrary(() => library.tasks.create(withInput(cycle) as never))).toBe(
      "refused limit_exceeded json_depth",
    );
  });

  it.each([
    ["a NUL", "a\u0000b"],
    ["a lone surrogate", "a\ud800b"],
  ])("a target input holding %s", async (_label, text) => {
    const body = withInput({ text });
    expect(await viaLibrary(() => library.tasks.create(body))).toBe("refused validation_failed");
    expect(await viaHttp("POST", "/v1/tasks", body)).toBe("refused validation_failed");
  });
});

describe("the depth counters", () => {
  it("count without recursion and stop just past the limit", () => {
    const deep = nested(100_000);
    expect(jsonDepth(deep)).toBe(DEFAULT_LIMITS.jsonDepth + 1);
    expect(jsonDepth(deep, 200_000)).toBe(100_000);
    const text = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(jsonTextDepth(text)).toBe(DEFAULT_LIMITS.jsonDepth + 1);
    expect(jsonTextDepth(text, 200_000)).toBe(100_000);
  });

  it("ignore brackets inside strings, escaped quotes included", () => {
    expect(jsonTextDepth('["[[[", "\\"[[", {"k": "}]"}]')).toBe(2);
    expect(jsonDepth({ a: "[[[[" })).toBe(1);
    expect(jsonDepth(1)).toBe(0);
  });

  it("make a value JSON cannot write, or too deep to walk, weigh Infinity", () => {
    expect(jsonBytes(nested(100_000))).toBe(Infinity);
    expect(jsonBytes({ n: 1n })).toBe(Infinity);
    expect(jsonBytes({ a: "é" })).toBe(10);
  });
});
