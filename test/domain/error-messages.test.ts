/**
 * Each domain error carries the code the API answers (docs/errors.md), its own name, the fields a caller
 * reads, and a message that says what to do (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import * as errors from "../../src/domain/errors.js";

describe("domain errors", () => {
  it.each([
    [
      new errors.LimitExceededError("page_size", 200),
      "limit_exceeded",
      "page_size exceeds the limit of 200",
    ],
    [new errors.LimitExceededError("body", 1, "too big"), "limit_exceeded", "too big"],
    [
      new errors.QuotaExceededError("runs_per_minute", 60, 12),
      "quota_exceeded",
      "runs_per_minute is over its quota of 60",
    ],
    [
      new errors.QuotaExceededError("backfill_runs_per_hour", 5, 1, "slow down"),
      "quota_exceeded",
      "slow down",
    ],
    [new errors.NotFoundError("calendar", "holidays"), "not_found", "calendar holidays not found"],
    [
      new errors.StaleVersionError(3, 4),
      "version_conflict",
      "the task is at version 4, not 3: read it again and retry",
    ],
    [
      new errors.CalendarChangedError("holidays"),
      "version_conflict",
      'calendar "holidays" changed while the task was written: read it again and retry',
    ],
    [
      new errors.CalendarInUseError("holidays", "t1"),
      "calendar_in_use",
      "calendar \"holidays\" is used by task t1: remove it from that task's exclude (and any other's) first",
    ],
    [
      new errors.KeyTakenError("nightly"),
      "key_taken",
      'another task already has the key "nightly": upsert it, or choose another key',
    ],
    [new errors.ActiveRunError("busy"), "run_active", "busy"],
    [new errors.TaskNotMutableError("running"), "task_not_mutable", "running"],
    [
      new errors.IllegalTransitionError("run", "succeeded", "running"),
      "illegal_transition",
      "a run cannot move from succeeded to running",
    ],
    [
      new errors.RunNotRedrivableError("r1", "running"),
      "illegal_transition",
      "run r1 is running: it is still active; only a failed, timed_out or cancelled run can be retried",
    ],
    [
      new errors.RunNotRedrivableError("r1", "queued"),
      "illegal_transition",
      "run r1 is queued: it is still active; only a failed, timed_out or cancelled run can be retried",
    ],
    [
      new errors.RunNotRedrivableError("r1", "launching"),
      "illegal_transition",
      "run r1 is launching: it is still active; only a failed, timed_out or cancelled run can be retried",
    ],
    [
      new errors.RunNotRedrivableError("r1", "succeeded"),
      "illegal_transition",
      "run r1 is succeeded: it succeeded; trigger the task for a new run instead",
    ],
    [
      new errors.RunNotRedrivableError("r1", "skipped"),
      "illegal_transition",
      "run r1 is skipped: it was never launched (a skipped or missed record); only a failed, timed_out or cancelled run can be retried",
    ],
    [
      new errors.TaskDefectiveError(["schedule", "target"], "trigger"),
      "task_defective",
      "the task's stored schedule, target does not parse: trigger needs it; edit the task giving it anew, or delete the task",
    ],
    [errors.ValidationError.of("grace", "too long"), "validation_failed", "grace: too long"],
    [new errors.LeaseLostError("taken over"), "lease_lost", "taken over"],
    [new errors.ThreadBusyError("busy"), "thread_busy", "busy"],
    [new errors.LaunchFailedError("400"), "launch_failed", "400"],
    [new errors.LaunchIndeterminateError("timeout"), "launch_indeterminate", "timeout"],
    [new errors.TargetUnavailableError("down"), "target_unavailable", "down"],
  ])("%s answers %s", (error, code, message) => {
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.name).toBe(error.constructor.name);
    expect(error).toBeInstanceOf(errors.PunctualError);
    expect(error).toBeInstanceOf(Error);
    expect(errors.isPunctualError(error)).toBe(true);
  });

  it("keeps the fields a caller reads", () => {
    expect(new errors.QuotaExceededError("runs_per_minute", 60, 12)).toMatchObject({
      limit: "runs_per_minute",
      max: 60,
      retryAfterSeconds: 12,
    });
    expect(new errors.StaleVersionError(3, 4)).toMatchObject({ expected: 3, actual: 4 });
    expect(new errors.CalendarInUseError("holidays", "t1")).toMatchObject({
      calendar: "holidays",
      taskId: "t1",
    });
    const cause = new Error("23505");
    expect(new errors.KeyTakenError("nightly", { cause })).toMatchObject({ key: "nightly", cause });
    expect(new errors.RunNotRedrivableError("r1", "failed", "its task was deleted").message).toBe(
      "run r1 is failed: its task was deleted",
    );
  });

  it("tells a plain error or a value from a punctual error", () => {
    expect(errors.isPunctualError(new Error("x"))).toBe(false);
    expect(errors.isPunctualError(null)).toBe(false);
    expect(errors.isPunctualError({ code: "not_found" })).toBe(false);
  });

  it("names the first few fields of a large validation error and counts the rest", () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ field: `f${i}`, message: "bad" }));
    const error = new errors.ValidationError(many);
    expect(error.errors).toHaveLength(12);
    expect(error.message).toMatch(/^f0: bad; f1: bad; .*; and \d+ more$/);
    expect(new errors.ValidationError(many.slice(0, 1)).message).toBe("f0: bad");
  });

  it("refuses to return from assertNever", () => {
    expect(() => errors.assertNever("odd" as never)).toThrow();
  });
});
