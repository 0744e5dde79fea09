/**
 * Typed handlers (docs/library.md#typed-handlers): a handler with a name and a Standard Schema for its
 * input (zod 4, valibot, arktype and others implement it). The schema types the handler's `input`, the
 * scheduler's `tasks.create` checks a task naming the handler against it at compile time, and punctual
 * validates the input when a task is created or edited (422 naming the field) and again before each
 * launch (a run whose input no longer validates fails without retry, reason `invalid_input`).
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { FieldError } from "../../../domain/errors.js";
import type { JsonValue } from "../../../domain/target.js";
import type { RunView, TaskView } from "../../../application/shapes/view-mappers.js";

/** What a handler receives; `I` is its input's type (a typed handler's schema output). */
export interface HandlerContext<I = JsonValue> {
  /** The run, in the API's shape (`scheduled_for`, `fire_at`, `late`, `attempt`, ...). */
  readonly run: RunView;
  readonly task: TaskView;
  /** The task target's `input` (a typed handler's: as its schema's output, validated before launch). */
  readonly input: I;
  /** Aborted when the run is cancelled, times out, or the replica shuts down. */
  readonly signal: AbortSignal;
  /** Tells punctual the handler is alive: the run's deadline moves to now + `run_timeout`. */
  heartbeat(): Promise<void>;
}

/**
 * A handler: resolve (with a small JSON result, or nothing) and the run succeeds; throw and it fails
 * (and is retried if the task's `retry.max_attempts` allows; `NonRetryableError` and `RetryableError`
 * say otherwise, docs/library.md#failures-a-handler-can-state).
 */
export type Handler<I = JsonValue> = (context: HandlerContext<I>) => unknown;

/** A named handler with its input's schema, made by `defineHandler`. */
export interface HandlerDefinition<
  N extends string = string,
  S extends StandardSchemaV1 = StandardSchemaV1,
> {
  /** The name tasks give as `target.name`. */
  readonly name: N;
  /** The input's schema: `target.input` must pass it; the handler receives its output. */
  readonly input: S;
  /** The function (a method, so a definition fits wherever any definition is asked for). */
  handler(context: HandlerContext<StandardSchemaV1.InferOutput<S>>): unknown;
}

/**
 * A handler whose input is typed and checked by `input`, any Standard Schema.
 *
 * @example
 * ```ts
 * const sendReminder = defineHandler({
 *   name: "sendReminder",
 *   input: z.object({ to: z.email() }),
 *   handler: async ({ input }) => mailer.send(input.to), // input: { to: string }
 * });
 * const scheduler = createScheduler({ store, handlers: [sendReminder] });
 * ```
 */
export function defineHandler<const N extends string, S extends StandardSchemaV1>(definition: {
  readonly name: N;
  readonly input: S;
  readonly handler: Handler<StandardSchemaV1.InferOutput<S>>;
}): HandlerDefinition<N, S> {
  return Object.freeze({ ...definition });
}

/** What `handlers` takes: functions or definitions by name, or a list of definitions. */
export type HandlersOption =
  Readonly<Record<string, Handler | HandlerDefinition>> | readonly HandlerDefinition[];

/** One registered handler: its function, and its schema if it has one. */
export interface RegisteredHandler {
  readonly run: Handler<unknown>;
  readonly schema: StandardSchemaV1 | null;
}

function isDefinition(value: unknown): value is HandlerDefinition {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { handler?: unknown }).handler === "function" &&
    typeof (value as { input?: { "~standard"?: unknown } }).input?.["~standard"] === "object"
  );
}

/**
 * The handlers by name. @throws Error for a definition listed under another name than its own, a name
 * given twice, or a value that is neither a function nor a definition
 */
export function registerHandlers(
  handlers: HandlersOption | undefined,
): Map<string, RegisteredHandler> {
  const registered = new Map<string, RegisteredHandler>();
  const add = (name: string, value: unknown): void => {
    if (registered.has(name)) throw new Error(`two handlers are named "${name}"`);
    if (typeof value === "function") {
      registered.set(name, { run: value as Handler<unknown>, schema: null });
    } else if (isDefinition(value)) {
      if (value.name !== name) {
        throw new Error(`the handler "${value.name}" is registered under another name, "${name}"`);
      }
      registered.set(name, { run: (context) => value.handler(context), schema: value.input });
    } else {
      throw new Error(`handler "${name}" is not a function (nor made by defineHandler)`);
    }
  };
  if (Array.isArray(handlers)) {
    for (const definition of handlers as readonly unknown[]) {
      add(isDefinition(definition) ? definition.name : String(definition), definition);
    }
  } else if (handlers !== undefined) {
    for (const [name, value] of Object.entries(handlers)) add(name, value);
  }
  return registered;
}

/** A Standard Schema's issues as field errors under `prefix` (`target.input.to`). */
export function issueFields(
  issues: readonly StandardSchemaV1.Issue[],
  prefix: string,
): FieldError[] {
  return issues.map((issue) => {
    const path = (issue.path ?? []).map((segment) =>
      String(typeof segment === "object" ? segment.key : segment),
    );
    return { field: [prefix, ...path].join("."), message: issue.message };
  });
}

/** Validates `value` with `schema`: its output, or the issues as field errors under `prefix`. */
export async function validateWith(
  schema: StandardSchemaV1,
  value: unknown,
  prefix: string,
): Promise<{ ok: true; value: unknown } | { ok: false; errors: FieldError[] }> {
  let result = schema["~standard"].validate(value);
  if (result instanceof Promise) result = await result;
  if (result.issues !== undefined) return { ok: false, errors: issueFields(result.issues, prefix) };
  return { ok: true, value: result.value };
}

/** The input type of a handler option's value: a definition's schema input, else any JSON. */
type InputOf<V> =
  V extends HandlerDefinition<string, infer S> ? StandardSchemaV1.InferInput<S> : JsonValue;

/**
 * The inputs by handler name of a `handlers` option with at least one definition, known by its literal
 * names (else `null`: the scheduler's `tasks.create` stays untyped). Plain functions take any JSON input;
 * the built-in `log` is always there.
 */
export type HandlerInputsOf<H> = H extends readonly HandlerDefinition[]
  ? string extends H[number]["name"]
    ? null
    : { readonly [D in H[number] as D["name"]]: InputOf<D> } & { readonly log?: JsonValue }
  : H extends Readonly<Record<string, unknown>>
    ? string extends keyof H
      ? null
      : [Extract<H[keyof H], HandlerDefinition>] extends [never]
        ? null
        : { readonly [K in keyof H & string]: InputOf<H[K]> } & { readonly log?: JsonValue }
    : null;
