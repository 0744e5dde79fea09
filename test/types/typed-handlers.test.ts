/**
 * The types of typed handlers (docs/library.md#typed-handlers): `defineHandler` types a handler's input
 * from its schema, and a scheduler made with typed handlers checks `tasks.create` / `tasks.update`
 * against the named handler's input. `npm run lint:types` compiles this file, so each
 * `@ts-expect-error` fails the lint if the call it marks ever compiles; `expectTypeOf` does the same
 * for the inferred types. The test run only makes the calls (never starting a scheduler).
 */
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  createScheduler,
  defineHandler,
  NonRetryableError,
  RetryableError,
  sqlite,
} from "../../src/index.js";
import type {
  HandlerContext,
  JsonValue,
  RunView,
  TaskCreateInput,
  TaskPatchInput,
  TaskView,
} from "../../src/index.js";

const sendReminder = defineHandler({
  name: "sendReminder",
  input: z.object({ to: z.email(), times: z.int().default(1) }),
  handler: ({ input, run, task }) => {
    expectTypeOf(input).toEqualTypeOf<{ to: string; times: number }>();
    expectTypeOf(run).toEqualTypeOf<RunView>();
    expectTypeOf(task).toEqualTypeOf<TaskView>();
    return { sent: input.to };
  },
});

const resize = defineHandler({
  name: "resize",
  input: z.object({ width: z.number().positive() }),
  handler: ({ input }) => input.width * 2,
});

const schedule = { type: "cron", cron: "0 9 * * *" } as const;
/** Never called: the calls inside are checked by the compiler only. */
function typeChecks(): void {
  const typed = createScheduler({ store: sqlite(":memory:"), handlers: [sendReminder, resize] });

  void typed.tasks.create({
    title: "remind",
    schedule,
    target: { kind: "handler", name: "sendReminder", input: { to: "a@example.com" } },
  });
  void typed.tasks.create({
    title: "resize",
    schedule,
    target: { kind: "handler", name: "resize", input: { width: 3 } },
  });
  // The built-in log handler takes any JSON input, or none.
  void typed.tasks.create({ title: "log", schedule, target: { kind: "handler", name: "log" } });
  // Other target kinds are untouched.
  void typed.tasks.create({
    title: "hook",
    schedule,
    target: { kind: "webhook", url: "https://example.com/hook" },
  });
  void typed.tasks.create({
    title: "remind",
    schedule,
    // @ts-expect-error `to` must be a string
    target: { kind: "handler", name: "sendReminder", input: { to: 42 } },
  });
  void typed.tasks.create({
    title: "remind",
    schedule,
    // @ts-expect-error the input of sendReminder is required
    target: { kind: "handler", name: "sendReminder" },
  });
  void typed.tasks.create({
    title: "resize",
    schedule,
    // @ts-expect-error resize takes a width, not sendReminder's input
    target: { kind: "handler", name: "resize", input: { to: "a@example.com" } },
  });
  void typed.tasks.create({
    title: "unknown",
    schedule,
    // @ts-expect-error no handler of that name
    target: { kind: "handler", name: "sendReminders", input: {} },
  });
  void typed.tasks.update("task-id", {
    target: { kind: "handler", name: "resize", input: { width: 5 } },
  });
  // @ts-expect-error a patch's handler target is checked too
  void typed.tasks.update("task-id", { target: { kind: "handler", name: "resize", input: {} } });
  void typed.tasks.upsert({
    key: "reminders:a",
    title: "remind",
    schedule,
    target: { kind: "handler", name: "sendReminder", input: { to: "a@example.com" } },
  });
  void typed.tasks.upsert({
    key: "reminders:a",
    title: "remind",
    schedule,
    // @ts-expect-error an upsert's handler target is checked as a create's is
    target: { kind: "handler", name: "sendReminder", input: { to: 42 } },
  });
  void typed.tasks.upsert({
    key: "reminders:b",
    title: "unknown",
    schedule,
    // @ts-expect-error no handler of that name
    target: { kind: "handler", name: "sendReminders", input: {} },
  });

  // Handlers by name in a map: the same inference; a plain function keeps taking any JSON.
  const mapped = createScheduler({
    store: sqlite(":memory:"),
    handlers: { sendReminder, plain: ({ input }) => input },
  });
  void mapped.tasks.create({
    title: "plain",
    schedule,
    target: { kind: "handler", name: "plain", input: { any: ["json"] } },
  });
  void mapped.tasks.create({
    title: "remind",
    schedule,
    // @ts-expect-error the map's typed handler is checked
    target: { kind: "handler", name: "sendReminder", input: { to: 1 } },
  });

  // Untyped handlers keep working: any input is accepted by the compiler and validated at run time.
  const untyped = createScheduler({
    store: sqlite(":memory:"),
    handlers: {
      greet: (context) => {
        expectTypeOf(context).toEqualTypeOf<HandlerContext>();
        expectTypeOf(context.input).toEqualTypeOf<JsonValue>();
      },
    },
  });
  expectTypeOf<Parameters<typeof untyped.tasks.create>[0]>().toBeUnknown();
  expectTypeOf<Parameters<typeof untyped.tasks.upsert>[0]>().toBeUnknown();
  expectTypeOf(untyped).toBeObject();
}

describe("typed handlers' types", () => {
  it("are checked by the compiler (npm run lint:types)", () => {
    expectTypeOf(typeChecks).toBeFunction();
  });

  it("export the public input types, shaped as the HTTP API's bodies", () => {
    expectTypeOf<TaskCreateInput["title"]>().toEqualTypeOf<string>();
    expectTypeOf<TaskPatchInput["title"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<TaskCreateInput["target"]>()
      .extract<{ kind: "handler" }>()
      .toHaveProperty("name")
      .toEqualTypeOf<string>();
  });

  it("export the errors a handler throws", () => {
    expectTypeOf(new NonRetryableError("no")).toExtend<Error>();
    expectTypeOf(new RetryableError("later", { delayMs: 1000 }).delayMs).toEqualTypeOf<number>();
  });
});
