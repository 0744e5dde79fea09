/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * Fuzzing every inbound JSON document with deep and wide values (docs/security.md#bounded-input): task
 * create, patch and batch bodies, `/complete` and agent hook bodies, the library's own create, and a
 * webhook's answer. Whatever the shape, the answer is a 2xx or a 4xx naming the limit, never a 500, and
 * a run fed a refused result fails with words that say why. Fixed case counts keep it to seconds.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { interpretReply } from "../../../src/adapters/launchers/webhook/webhook-reply.js";
import {
  DEFAULT_LIMITS,
  jsonDepth,
  jsonTextDepth,
  resultProblem,
} from "../../../src/application/policy/limits.js";
import { isPunctualError } from "../../../src/domain/errors.js";
import type { Run } from "../../../src/domain/run.js";
import { createTestScheduler } from "../../../src/testing.js";
import { CRON_TASK, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

const NUM_RUNS = 40;
const MAX_DEPTH = DEFAULT_LIMITS.jsonDepth;

/** A JSON document's text: `depth` levels of arrays or objects (chosen per level), each level `width` wide. */
interface Shape {
  readonly depth: number;
  readonly width: number;
  readonly kinds: readonly boolean[];
  readonly leaf: string;
}

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  depth: fc.oneof(
    fc.integer({ min: 0, max: MAX_DEPTH + 4 }),
    fc.integer({ min: MAX_DEPTH - 2, max: 2_000 }),
    fc.constantFrom(10_000, 100_000),
  ),
  width: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 400 })),
  kinds: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  leaf: fc.oneof(fc.constant("1"), fc.constant('"x"'), fc.constant("null"), fc.constant('"[{"')),
});

/** The text of `shape`, built without recursion; a wide level repeats the leaf beside the child. */
function textOf(shape: Shape): string {
  let text = shape.leaf;
  const siblings = Array.from({ length: Math.max(0, shape.width - 1) }, () => shape.leaf).join(",");
  for (let level = 0; level < shape.depth; level++) {
    const array = shape.kinds[level % shape.kinds.length] ?? true;
    // Only the innermost level is wide: deep and wide stays bounded in size.
    const more = level === 0 && siblings !== "" ? `,${siblings}` : "";
    text = array ? `[${text}${more}]` : `{"k":${text}${more === "" ? "" : `,"w":[${siblings}]`}}`;
  }
  return text;
}

/** The nesting `textOf(shape)` has: one more when its innermost level is a wide object (`"w":[...]`). */
function depthOf(shape: Shape): number {
  const wideObject = shape.depth > 0 && shape.width > 1 && shape.kinds[0] === false;
  return shape.depth + (wideObject ? 1 : 0);
}

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

async function post(url: string, payload: string, method: "POST" | "PATCH" | "PUT" = "POST") {
  const answer = await t.server.app.inject({
    method,
    url,
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
      ...(method === "PATCH" ? { "if-match": "*" } : {}),
    },
    payload,
  });
  return { status: answer.statusCode, body: answer.json() };
}

/** The property every inbound path keeps: a 2xx, or a 4xx that names json_depth when too deep. */
function expectBounded(answer: { status: number; body: any }, tooDeep: boolean): void {
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
  if (tooDeep) {
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ limit: "json_depth", max: MAX_DEPTH });
  }
}

const withInput = (input: string): string =>
  JSON.stringify({ ...CRON_TASK, target: { kind: "handler", name: "log", input: "HOLE" } }).replace(
    '"HOLE"',
    input,
  );

describe("the depth counters", () => {
  it("agree with each other and with JSON.parse on every shape", () => {
    fc.assert(
      fc.property(shapeArb, (shape) => {
        const text = textOf(shape);
        const fromText = jsonTextDepth(text, 1_000_000);
        expect(fromText).toBe(depthOf(shape));
        const parsed: unknown = JSON.parse(text);
        expect(jsonDepth(parsed, 1_000_000)).toBe(fromText);
        // Both stop early: a 100,000-deep document costs no more than one just over the limit.
        expect(jsonTextDepth(text)).toBe(Math.min(fromText, MAX_DEPTH + 1));
        expect(jsonDepth(parsed)).toBe(Math.min(fromText, MAX_DEPTH + 1));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe("every inbound HTTP document", () => {
  it("task create: target.input deep or wide", async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, async (shape) => {
        const answer = await post("/v1/tasks", withInput(textOf(shape)));
        expectBounded(answer, depthOf(shape) + 2 > MAX_DEPTH);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("task patch and batch create", async () => {
    const created = await post("/v1/tasks", withInput("1"));
    expect(created.status).toBe(201);
    const id: string = created.body.task.id;
    await fc.assert(
      fc.asyncProperty(shapeArb, async (shape) => {
        const input = textOf(shape);
        const patch = await post(
          `/v1/tasks/${id}`,
          `{"target":{"kind":"handler","name":"log","input":${input}}}`,
          "PATCH",
        );
        expectBounded(patch, depthOf(shape) + 2 > MAX_DEPTH);
        const batch = await post("/v1/tasks/batch", `{"tasks":[${withInput(input)}]}`);
        expectBounded(batch, depthOf(shape) + 4 > MAX_DEPTH);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("upsert by key", async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, async (shape) => {
        const answer = await post("/v1/tasks/by-key/fuzz", withInput(textOf(shape)), "PUT");
        expectBounded(answer, depthOf(shape) + 2 > MAX_DEPTH);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("/complete results and agent hook bodies (before and after the token is checked)", async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, async (shape) => {
        const text = textOf(shape);
        const complete = await post(
          "/v1/runs/run_nope/complete?token=abc",
          `{"status":"succeeded","result":${text}}`,
        );
        expect(complete.status).toBeLessThan(500);
        const hook = await post(
          "/v1/hooks/agent/main?run=run_nope&token=abc",
          `{"run_id":"r","status":"success","values":${text}}`,
        );
        expect(hook.status).toBeLessThan(500);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe("the library and the targets' answers", () => {
  it("tasks.create with deep or wide values refuses with limit_exceeded, never a RangeError", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-05T00:00:00Z" });
    try {
      await fc.assert(
        fc.asyncProperty(shapeArb, async (shape) => {
          const input: unknown = JSON.parse(textOf(shape));
          try {
            await scheduler.tasks.create({
              title: "fuzz",
              schedule: { type: "cron", cron: "* * * * *" },
              target: { kind: "handler", name: "job", input: input as never },
            });
            expect(depthOf(shape) + 2).toBeLessThanOrEqual(MAX_DEPTH);
          } catch (error) {
            expect(isPunctualError(error), String(error)).toBe(true);
            if (depthOf(shape) + 2 > MAX_DEPTH) {
              expect(error).toMatchObject({ code: "limit_exceeded", limit: "json_depth" });
            }
          }
        }),
        { numRuns: NUM_RUNS },
      );
    } finally {
      await scheduler.stop();
    }
  });

  it("a handler's result: a reason when too deep or too large, never a throw", () => {
    fc.assert(
      fc.property(shapeArb, (shape) => {
        const text = textOf(shape);
        const value: unknown = JSON.parse(text);
        const reason = resultProblem(value, "the handler's");
        if (depthOf(shape) > MAX_DEPTH) expect(reason).toMatch(/nests deeper than 64 levels/);
        else if (Buffer.byteLength(text) > DEFAULT_LIMITS.resultBytes)
          expect(reason).toMatch(/KiB/);
        else expect(reason).toBeNull();
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("a webhook's 200 answer with a deep or wide result fails its run with the reason, never throws", () => {
    const run = { id: "run_1", threadId: null } as unknown as Run;
    fc.assert(
      fc.property(shapeArb, (shape) => {
        const body = `{"status":"succeeded","result":${textOf(shape)}}`;
        const launched = interpretReply(
          { status: 200, headers: { "content-type": "application/json" }, body },
          run,
        );
        const tooDeep = depthOf(shape) + 1 > MAX_DEPTH;
        const tooBig = Buffer.byteLength(body) > DEFAULT_LIMITS.resultBytes;
        if (tooDeep) {
          expect(launched.completion).toMatchObject({
            status: "failed",
            error: expect.stringMatching(/nests deeper than 64 levels/),
          });
        } else if (!tooBig) {
          expect(launched.completion?.status).toBe("succeeded");
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
