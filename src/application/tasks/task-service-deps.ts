/**
 * What the owner's use cases (task-service.ts) are built from and what creating a task answers; the
 * service re-exports them.
 */
import type { FieldError } from "../../domain/errors.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { HolidaySource } from "../../domain/ports/holiday-source.js";
import type { Store } from "../../domain/ports/store.js";
import type { ThreadLookup } from "../../domain/ports/thread-lookup.js";
import type { Run } from "../../domain/run.js";
import type { AgentTarget, JsonValue, WebhookTarget } from "../../domain/target.js";
import type { Task } from "../../domain/task.js";
import type { EventSink } from "../events/internal-events.js";
import type { Limits } from "../policy/limits.js";
import type { AdmissionWindow } from "../policy/admission-window.js";
import type { Quotas } from "../policy/quotas.js";
import type { TaskView } from "../shapes/view-mappers.js";
import type { UpsertField } from "./upsert-task.js";

/** Signals the service raises for the runtime (in-process wake-ups and cancel hooks). */
export interface ServiceSignals {
  /** Something may be due sooner than the coordinator thinks (create, edit, trigger, resume). */
  wake(): void;
  /** A launching or running run was asked to stop: its target's cancel hook should be called. */
  cancelRequested(run: Run, task: Task): void;
}

export interface TaskServiceDeps {
  readonly store: Store;
  readonly threads: ThreadLookup;
  readonly policy: SchedulePolicy;
  /** Mints task ids and default trigger keys. */
  readonly newId: () => string;
  /** Mints a task's webhook signing secret. */
  readonly newSecret: () => string;
  /** Handler names a task may name; null when the caller does not check them. */
  readonly handlerNames: ReadonlySet<string> | null;
  /** The handler names the live replicas registered, for names `handlerNames` lacks. @default none */
  readonly registeredHandlerNames?: (() => Promise<ReadonlySet<string>>) | null;
  /** What a typed handler's schema finds wrong with a target's input; null or absent: not checked. */
  readonly handlerInputProblems?:
    ((name: string, input: JsonValue) => Promise<readonly FieldError[]>) | null;
  /** Agent server names a task may name; null when the caller does not check them. */
  readonly agentServers: ReadonlySet<string> | null;
  /** What an agent target would send that its server refuses (its run config, context, input). */
  readonly agentTargetProblems?: ((target: AgentTarget) => readonly FieldError[]) | null;
  /** What the SSRF guard refuses in a webhook target before any DNS lookup. */
  readonly webhookTargetProblems?: ((target: WebhookTarget) => readonly FieldError[]) | null;
  /** False when the operator signs every webhook with one server-wide secret. @default true */
  readonly signsWithTaskSecret?: boolean;
  readonly signals: ServiceSignals;
  /** Receives the status changes of runs the owner cancels. @default none */
  readonly events?: EventSink;
  /** Public holidays by region for calendar puts (docs/schedules.md#holidays). @default none: refused */
  readonly holidays?: HolidaySource | undefined;
  /** The input limits, with the operator's settings (limits.ts). @default DEFAULT_LIMITS */
  readonly limits?: Limits;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** Runs admitted per owner in the last minute on this replica, shared with the dispatcher. */
  readonly admissions?: AdmissionWindow;
}

export interface CreatedTask {
  readonly task: TaskView;
  readonly warnings: readonly string[];
}

/** What an upsert did (docs/semantics.md#upsert). */
export interface UpsertedTask extends CreatedTask {
  /** True when no task had the key: the task was created (HTTP 201). */
  readonly created: boolean;
  /** The fields the upsert changed; empty when the task was created or already matched. */
  readonly changed: readonly UpsertField[];
}
