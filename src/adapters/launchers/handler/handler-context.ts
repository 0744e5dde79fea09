/**
 * What a handler receives (`HandlerContext`), made once per handler run on the hot path
 * (docs/benchmarks.md, the worker's side of a launch). The run's and the task's views, the abort
 * signal and the heartbeat function are made when the handler first reads them: most handlers read few
 * of them, and a run's view formats a handful of instants. They are still the context's own enumerable properties, in the order
 * `run`, `task`, `input`, `signal`, `heartbeat`, so that a spread or `Object.keys` of a context sees what
 * it always saw; their getters are shared by every context (a literal with getters would make three
 * closures per run and an object V8 keeps in dictionary mode, about 900 bytes a run instead of 190).
 */
import type { LazyAbort } from "../../../application/dispatch/lazy-abort.js";
import { runView, taskView } from "../../../application/shapes/view-mappers.js";
import type { RunView, TaskView } from "../../../application/shapes/view-mappers.js";
import type { RunId } from "../../../domain/ids.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { HandlerContext } from "./handler-definition.js";

/** Where a handler's heartbeats go (the launcher's sink). */
export interface Heartbeats {
  heartbeat(runId: RunId): Promise<void>;
}

export class LazyHandlerContext implements HandlerContext<unknown> {
  declare readonly run: RunView;
  declare readonly task: TaskView;
  declare readonly input: unknown;
  declare readonly signal: AbortSignal;
  declare readonly heartbeat: () => Promise<void>;

  readonly #run: Run;
  readonly #task: Task;
  readonly #abort: LazyAbort;
  readonly #beats: Heartbeats;
  #runShown: RunView | undefined = undefined;
  #taskShown: TaskView | undefined = undefined;
  #heartbeat: (() => Promise<void>) | undefined = undefined;

  /** The getters every context shares (each reads the context it is called on). */
  static readonly #accessors = {
    run: {
      enumerable: true,
      get(this: LazyHandlerContext): RunView {
        return (this.#runShown ??= runView(this.#run));
      },
    },
    task: {
      enumerable: true,
      get(this: LazyHandlerContext): TaskView {
        return (this.#taskShown ??= taskView(this.#task));
      },
    },
    signal: {
      enumerable: true,
      get(this: LazyHandlerContext): AbortSignal {
        return this.#abort.signal;
      },
    },
    heartbeat: {
      enumerable: true,
      get(this: LazyHandlerContext): () => Promise<void> {
        if (this.#heartbeat === undefined) {
          const beats = this.#beats;
          const runId = this.#run.id;
          this.#heartbeat = () => beats.heartbeat(runId);
        }
        return this.#heartbeat;
      },
    },
  } satisfies Record<string, PropertyDescriptor>;

  constructor(run: Run, task: Task, input: unknown, abort: LazyAbort, beats: Heartbeats) {
    this.#run = run;
    this.#task = task;
    this.#abort = abort;
    this.#beats = beats;
    const accessors = LazyHandlerContext.#accessors;
    Object.defineProperty(this, "run", accessors.run);
    Object.defineProperty(this, "task", accessors.task);
    this.input = input;
    Object.defineProperty(this, "signal", accessors.signal);
    Object.defineProperty(this, "heartbeat", accessors.heartbeat);
  }
}
