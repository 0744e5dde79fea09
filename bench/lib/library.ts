/**
 * Tasks made the way a user makes them: through the public library (`createScheduler(...).tasks`), in the
 * bench's own process, beside the running replicas. Two ways, both timed: `tasks.create` one task per
 * call with 32 calls in flight (what an application or an API client does), and `tasks.createMany` in
 * chunks where the library has it (found by feature detection, so the bench runs on a library without it
 * and says so instead of failing).
 */
import { createScheduler, postgres, sqlite } from "../../src/index.js";
import type { Scheduler } from "../../src/index.js";
import type { StoreTarget } from "./store-target.js";

export const CREATION_MODES = ["create", "createMany"] as const;
export type CreationMode = (typeof CREATION_MODES)[number];

/** `tasks.create` calls in flight at once. */
export const CREATE_IN_FLIGHT = 32;
/** Tasks per `tasks.createMany` call (the HTTP batch route's maximum). */
export const CREATE_MANY_CHUNK = 1000;

export const CREATION_LABEL: Readonly<Record<CreationMode, string>> = {
  create: `tasks.create, ${CREATE_IN_FLIGHT} in flight`,
  createMany: `tasks.createMany, chunks of ${CREATE_MANY_CHUNK}`,
};

/** What `tasks.createMany` is expected to look like: inputs in, created tasks out, in input order. */
type CreateMany = (inputs: readonly unknown[]) => Promise<readonly unknown[]>;

/** The library's `tasks.createMany`, or null where this version of the library has none. */
export function createManyOf(scheduler: Scheduler): CreateMany | null {
  const candidate = (scheduler.tasks as { createMany?: unknown }).createMany;
  return typeof candidate === "function" ? (candidate.bind(scheduler.tasks) as CreateMany) : null;
}

/** The id of a created task, from `{ task: { id } }` (what `create` returns) or a bare `{ id }`. */
export function createdId(created: unknown): string {
  const item = created as { task?: { id?: unknown }; id?: unknown } | null;
  const id = item?.task?.id ?? item?.id;
  if (typeof id !== "string")
    throw new Error(`a created task without an id: ${JSON.stringify(created)}`);
  return id;
}

/** Creation stopped at a refusal (a once task's instant passed while its siblings were created). */
export class CreationFailed extends Error {
  readonly created: number;
  readonly ms: number;

  constructor(cause: unknown, created: number, ms: number) {
    super(
      `creation stopped after ${created} tasks in ${ms} ms: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.created = created;
    this.ms = ms;
  }

  /** The library refused a once task whose instant had passed: creation was slower than planned. */
  get overran(): boolean {
    // Refused at validation ("must not be in the past") or, a moment later, at parsing.
    return /must not be in the past|no occurrence after now/.test(this.message);
  }
}

export interface Creation {
  readonly mode: CreationMode;
  /** The created tasks' ids, in input order. */
  readonly ids: string[];
  /** From the first call to the last answer (the store already open). */
  readonly ms: number;
}

/**
 * A scheduler in the bench's process that is never started: it only serves `tasks.*` calls against the
 * deployment's store, as an application's API process would.
 */
export class LibraryClient {
  readonly scheduler: Scheduler;

  constructor(store: StoreTarget) {
    this.scheduler = createScheduler({
      store:
        store.kind === "sqlite"
          ? sqlite(store.path)
          : postgres(store.url, store.schema === undefined ? {} : { schema: store.schema }),
      handlers: { noop: () => undefined },
    });
  }

  get createManyAvailable(): boolean {
    return createManyOf(this.scheduler) !== null;
  }

  /** Opens the store (the replicas have migrated it), so that creation timings do not include it. */
  async open(): Promise<void> {
    await this.scheduler.runtime();
  }

  /** Creates every input with `mode`; throws when `createMany` is asked for and absent. */
  async create(
    inputs: readonly unknown[],
    mode: CreationMode,
    onProgress?: (created: number) => void,
  ): Promise<Creation> {
    await this.open();
    const startedAt = performance.now();
    const ids = new Array<string>(inputs.length);
    let created = 0;
    if (mode === "createMany") {
      const createMany = createManyOf(this.scheduler);
      if (createMany === null) throw new Error("tasks.createMany is not available");
      for (let first = 0; first < inputs.length; first += CREATE_MANY_CHUNK) {
        let answer: readonly unknown[];
        try {
          answer = await createMany(inputs.slice(first, first + CREATE_MANY_CHUNK));
        } catch (error) {
          // A chunk is refused whole (one task's instant passed: the first chunks were created in
          // time): reported as `create`'s refusals are, so an overrun setup is tried once more.
          throw new CreationFailed(error, created, Math.round(performance.now() - startedAt));
        }
        answer.forEach((item, i) => (ids[first + i] = createdId(item)));
        created += answer.length;
        onProgress?.(created);
      }
    } else {
      let next = 0;
      let failure: unknown = null;
      const lane = async (): Promise<void> => {
        while (next < inputs.length && failure === null) {
          const index = next++;
          try {
            ids[index] = createdId(await this.scheduler.tasks.create(inputs[index]));
          } catch (error) {
            failure ??= error;
            return;
          }
          if (++created % 1000 === 0) onProgress?.(created);
        }
      };
      // Every lane stops at the first refusal; none is left calling into a store being closed.
      await Promise.all(Array.from({ length: CREATE_IN_FLIGHT }, lane));
      if (failure !== null) {
        throw new CreationFailed(failure, created, Math.round(performance.now() - startedAt));
      }
    }
    return { mode, ids, ms: Math.round(performance.now() - startedAt) };
  }

  /** Closes the store (its connections must not count as the database's work under measurement). */
  close(): Promise<void> {
    return this.scheduler.stop();
  }
}
