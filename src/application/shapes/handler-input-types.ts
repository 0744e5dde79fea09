/**
 * The public input types of tasks (docs/library.md#typed-handlers), as the library's `tasks.create`,
 * `tasks.upsert` and `tasks.update` take them. `I` maps handler names to their input types: a scheduler made with
 * `defineHandler` handlers checks a `handler` target's `name` and `input` against it at compile time;
 * with `null` (no typed handler) a handler target is any name with any JSON input. The shapes are the
 * zod schemas' inputs (task-input.ts), the same the HTTP API takes.
 */
import type {
  TaskCreateInput as CreateShape,
  TaskPatchInput as PatchShape,
  TaskUpsertInput as UpsertShape,
} from "./task-input.js";

/** Handler names to the types of the input each takes. */
export type HandlerInputMap = { readonly [name: string]: unknown };

type AnyTarget = CreateShape["target"];
type OtherTarget = Exclude<AnyTarget, { readonly kind: "handler" }>;
type InputField<T> = undefined extends T ? { readonly input?: T } : { readonly input: T };

/** A `handler` target naming one of `I`'s handlers with that handler's input. */
export type HandlerTargetInput<I extends HandlerInputMap> = {
  [N in keyof I & string]: { readonly kind: "handler"; readonly name: N } & InputField<I[N]>;
}[keyof I & string];

/** A task's target: agent, webhook, or a handler of `I` (any handler when `I` is null). */
export type TargetInput<I extends HandlerInputMap | null = null> = [I] extends [HandlerInputMap]
  ? OtherTarget | HandlerTargetInput<I>
  : AnyTarget;

/** What `tasks.create` takes (`POST /v1/tasks`'s body). */
export type TaskCreateInput<I extends HandlerInputMap | null = null> = Omit<
  CreateShape,
  "target"
> & { readonly target: TargetInput<I> };

/** What `tasks.upsert` takes (`PUT /v1/tasks/by-key/{key}`'s body, with its `key`). */
export type TaskUpsertInput<I extends HandlerInputMap | null = null> = Omit<
  UpsertShape,
  "target"
> & { readonly target: TargetInput<I> };

/** What `tasks.update` takes (`PATCH /v1/tasks/{id}`'s body): fields left out keep their value. */
export type TaskPatchInput<I extends HandlerInputMap | null = null> = Omit<PatchShape, "target"> & {
  readonly target?: TargetInput<I>;
};

/** The argument a typed operation takes: `Typed` when the scheduler has typed handlers, else anything. */
export type InputFor<I extends HandlerInputMap | null, Typed> = [I] extends [HandlerInputMap]
  ? Typed
  : unknown;
