/**
 * The scheduler's typed events (docs/architecture.md#events): what the services and the coordinator
 * report as they record decisions, claims and run changes. Metrics listen today; the library's
 * `scheduler.on(...)` and traces can listen the same way. Emitting is safe: a listener that throws is
 * reported to `onListenerError` and never reaches the emitter, so it can break neither a store
 * transaction nor the coordinator.
 */
import type { Admission } from "../../domain/admission.js";
import type { TaskId } from "../../domain/ids.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { TargetKind } from "../../domain/target.js";
import type { Task } from "../../domain/task.js";

/** Every event and its payload. */
export interface SchedulerEventMap {
  /**
   * One task's occurrences were decided (queued, skipped, missed; `cancel_other`'s cancellations). Sent
   * as admission decides, inside the store's transaction: a batch a store writes again after a conflict
   * decides again.
   */
  readonly "admission:decided": { readonly taskId: TaskId; readonly admission: Admission };
  /**
   * Admission met a due task whose stored fields no longer parse, and took it out of the due set
   * (docs/operations.md#a-task-that-does-not-parse). Sent once per defect: the task is not read again
   * until an edit repairs it.
   */
  readonly "task:defective": { readonly task: Task };
  /** An admission batch was written: how many tasks it admitted. */
  readonly "admission:batch": { readonly tasks: number };
  /** This replica claimed a queued run for launch (the run is `launching`). */
  readonly "run:claimed": { readonly run: Run; readonly targetKind: TargetKind };
  /**
   * A run's status changed in a write this process made: launched, ended (succeeded, failed, timed out,
   * cancelled, skipped by its queue timeout, lost with its replica: see `run.reason`), or queued again.
   * `from` is the status the write found.
   */
  readonly "run:changed": {
    readonly run: Run;
    readonly from: RunStatus;
    readonly targetKind: TargetKind;
  };
  /**
   * This replica's sweep found another replica silent for the liveness timeout and settled its work:
   * `claims` launch claims reconciled, `runs` handler runs ended (or queued again) `replica_lost`.
   */
  readonly "replica:lost": {
    readonly replicaId: string;
    readonly claims: number;
    readonly runs: number;
  };
  /** One coordinator pass ended (or failed) after `durationMs` of wall time. */
  readonly "coordinator:tick": { readonly durationMs: number };
  /** One admission batch written by the coordinator: `tasks` admitted in `durationMs` of wall time. */
  readonly "coordinator:admission": { readonly durationMs: number; readonly tasks: number };
  /** One claim by the coordinator: `claimed` runs in `durationMs` of wall time. */
  readonly "coordinator:claim": { readonly durationMs: number; readonly claimed: number };
  /** This replica wrote its heartbeat at `at` (its clock). */
  readonly "coordinator:heartbeat": { readonly at: number };
  /**
   * A store call of the coordinator failed and will be tried again: a pass (`tick`) or a batch of launch
   * answers and verdicts (`write`).
   */
  readonly "store:failed": { readonly operation: "tick" | "write" };
}

export type SchedulerEventName = keyof SchedulerEventMap;

export type SchedulerEventListener<E extends SchedulerEventName> = (
  payload: SchedulerEventMap[E],
) => void;

/** Where the services and the coordinator send their events. */
export interface EventSink {
  emit<E extends SchedulerEventName>(event: E, payload: SchedulerEventMap[E]): void;
  /**
   * Whether anyone listens to `event` now: an emitter of one event per run skips making its payloads
   * when nobody does. Absent: assume someone does.
   */
  listens?(event: SchedulerEventName): boolean;
}

/** A sink that drops everything. */
export const NO_EVENTS: EventSink = Object.freeze({
  emit: () => undefined,
  listens: () => false,
});

type ListenerSets = { readonly [E in SchedulerEventName]: Set<SchedulerEventListener<E>> };

/** The events of one scheduler: listeners by event, called in the order they were added. */
export class SchedulerEvents implements EventSink {
  readonly #listeners: ListenerSets = {
    "admission:decided": new Set(),
    "task:defective": new Set(),
    "admission:batch": new Set(),
    "run:claimed": new Set(),
    "run:changed": new Set(),
    "replica:lost": new Set(),
    "coordinator:tick": new Set(),
    "coordinator:admission": new Set(),
    "coordinator:claim": new Set(),
    "coordinator:heartbeat": new Set(),
    "store:failed": new Set(),
  };
  readonly #onListenerError: (error: unknown, event: SchedulerEventName) => void;

  constructor(
    options: {
      readonly onListenerError?: (error: unknown, event: SchedulerEventName) => void;
    } = {},
  ) {
    this.#onListenerError = options.onListenerError ?? (() => undefined);
  }

  /** Calls `listener` on every `event`; returns a function that stops it. */
  on<E extends SchedulerEventName>(event: E, listener: SchedulerEventListener<E>): () => void {
    const listeners: Set<SchedulerEventListener<E>> = this.#listeners[event];
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  listens(event: SchedulerEventName): boolean {
    return this.#listeners[event].size > 0;
  }

  emit<E extends SchedulerEventName>(event: E, payload: SchedulerEventMap[E]): void {
    const listeners: Set<SchedulerEventListener<E>> = this.#listeners[event];
    if (listeners.size === 0) return;
    for (const listener of listeners) {
      try {
        listener(payload);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }
}
