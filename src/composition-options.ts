/**
 * The option names a scheduler and a server know (docs/library.md#options-are-checked), checked before
 * anything is built. Part of the composition root; the lists live apart from createScheduler and
 * createServer so that both can use them without importing each other.
 */
import { unknownPolicyOptions } from "./application/policy/policy-options.js";
import {
  optionKeys,
  refuseUnknownOptions,
  unknownOptions,
} from "./application/policy/known-options.js";
import type { SchedulerOptions } from "./composition-runtime.js";
import type { CoordinatorOptions } from "./runtime/coordinator-options.js";
import type { RunWatcherOptions } from "./runtime/run-watcher.js";

/** Every key the options of both `createScheduler` and `createServer` take. */
export const SCHEDULER_KEYS = optionKeys<SchedulerOptions>()([
  "store",
  "handlers",
  "handlerNames",
  "policy",
  "logger",
  "clock",
  "coordinator",
  "watcher",
  "replicaId",
  "actor",
  "tracerProvider",
  "secretKeys",
  "launchers",
  "agentServers",
  "webhookAllow",
  "webhookSecret",
  "publicUrl",
  "threads",
]);
const COORDINATOR_KEYS = optionKeys<CoordinatorOptions>()([
  "tickMs",
  "admissionBatch",
  "admissionRounds",
  "maxInFlight",
  "sweepMs",
  "retentionMs",
  "shutdownTimeoutMs",
  "claimBatch",
  "writeBatch",
]);
const WATCHER_KEYS = optionKeys<RunWatcherOptions>()([
  "intervalMs",
  "reconcileDelayMs",
  "concurrency",
]);

/**
 * Refuses options a scheduler or server does not know, at any level it documents
 * (docs/library.md#options-are-checked).
 * @throws validation_failed naming each unknown key and the closest known one
 */
export function checkOptionKeys(options: SchedulerOptions, known: readonly string[]): void {
  refuseUnknownOptions([
    ...unknownOptions(options, known),
    ...unknownOptions(options.coordinator, COORDINATOR_KEYS, "coordinator"),
    ...unknownOptions(options.watcher, WATCHER_KEYS, "watcher"),
    ...unknownPolicyOptions(options.policy ?? {}),
  ]);
}
