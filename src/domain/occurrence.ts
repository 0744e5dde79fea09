/**
 * Pure facts about one occurrence: its jittered fire time (a deterministic hash of task id and nominal
 * time, docs/schedules.md#bounds-and-jitter) and its idempotency key (stable across attempts, docs/semantics.md#launch).
 */
import type { TaskId } from "./ids.js";
import type { RunTrigger } from "./run.js";
import type { DurationMs, Instant } from "./time.js";

/** 32-bit FNV-1a: a stable, dependency-free hash for jitter and backoff spreading. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A deterministic fraction in [0, 1) derived from `seed`. */
export function hashFraction(seed: string): number {
  return fnv1a(seed) / 0x1_0000_0000;
}

/**
 * `scheduled_for` plus a deterministic amount in [0, jitter] (whole seconds), never at or past the next
 * nominal time.
 */
export function jitteredFireAt(args: {
  readonly taskId: TaskId;
  readonly scheduledFor: Instant;
  readonly jitterMs: DurationMs;
  readonly nextNominal: Instant | null;
}): Instant {
  const { taskId, scheduledFor, jitterMs, nextNominal } = args;
  if (jitterMs <= 0) return scheduledFor;
  const steps = Math.floor(jitterMs / 1000);
  let offset = Math.floor(hashFraction(`${taskId}|${scheduledFor}`) * (steps + 1)) * 1000;
  if (nextNominal !== null) {
    // Never at or past the next nominal time: keep at least one second before it.
    offset = Math.min(offset, Math.max(0, nextNominal - scheduledFor - 1000));
  }
  return (scheduledFor + offset) as Instant;
}

/** The longest idempotency key punctual sends (docs/semantics.md#launch). */
export const IDEMPOTENCY_KEY_MAX = 255;

/**
 * The idempotency key of an occurrence: derived from the task, the trigger and the nominal time (manual
 * runs: the client's key), stable across attempts.
 */
export function idempotencyKeyFor(
  taskId: TaskId,
  trigger: RunTrigger,
  discriminator: Instant | string,
): string {
  const key = `punctual:${taskId}:${trigger}:${String(discriminator)}`;
  // Task ids and client keys are bounded at input, so this only guards a programming error.
  if (key.length > IDEMPOTENCY_KEY_MAX) throw new RangeError(`idempotency key too long: ${key}`);
  return key;
}
