/**
 * `runStateValues` builds a run change's values itself instead of cutting them out of the whole row
 * (`runValues`): both must send the same value for every state column, in `RUN_STATE_COLUMNS` order.
 */
import { describe, expect, it } from "vitest";
import { fencingToken, ownerId, runId, taskId, threadId } from "../../../../src/domain/ids.js";
import type { Run } from "../../../../src/domain/run.js";
import { instant } from "../../../../src/domain/time.js";
import { RUN_COLUMNS, runValues } from "../../../../src/adapters/storage/postgres/postgres-rows.js";
import {
  RUN_STATE_COLUMNS,
  runStateValues,
} from "../../../../src/adapters/storage/postgres/postgres-run-writes.js";

/** A run whose every field holds a value no other field holds, so that a swap shows. */
function distinctRun(result: Run["result"]): Run {
  return {
    id: runId("run-1"),
    taskId: taskId("task-1"),
    owner: ownerId("owner-1"),
    trigger: "scheduled",
    scheduledFor: instant(1_000),
    fireAt: instant(2_000),
    status: "running",
    reason: "run_timeout",
    missedCount: 3,
    missedUntil: instant(3_000),
    attempt: 4,
    failures: 5,
    notBefore: instant(6_000),
    threadScope: "scope-1",
    threadId: threadId("thread-1"),
    exclusive: true,
    claimToken: fencingToken("token-1"),
    claimExpiresAt: instant(7_000),
    claimedBy: "replica-1",
    targetRunId: "target-run-1",
    idempotencyKey: "client-key",
    queuedAt: instant(8_000),
    launchedAt: instant(9_000),
    deadlineAt: instant(10_000),
    finishedAt: instant(11_000),
    latenessMs: 12,
    late: false,
    cancelRequestedAt: instant(13_000),
    error: "an error",
    result,
    moved: false,
  };
}

function fromWholeRow(run: Run): unknown[] {
  const values = runValues(run);
  return RUN_STATE_COLUMNS.map((column) => values[RUN_COLUMNS.indexOf(column)]);
}

describe("runStateValues", () => {
  it("sends what the whole row sends for every state column, in order", () => {
    for (const result of [{ answer: [1, "two", null] }, null]) {
      const run = distinctRun(result);
      expect(runStateValues(run)).toEqual(fromWholeRow(run));
    }
    const cleared: Run = {
      ...distinctRun(null),
      reason: null,
      claimToken: null,
      claimExpiresAt: null,
      claimedBy: null,
      targetRunId: null,
      launchedAt: null,
      deadlineAt: null,
      finishedAt: null,
      latenessMs: null,
      cancelRequestedAt: null,
      error: null,
    };
    expect(runStateValues(cleared)).toEqual(fromWholeRow(cleared));
  });
});
