import { describe, expect, it } from "vitest";
import {
  RUN_COLUMNS,
  runFromRow,
  runToRow,
  runValues,
  TASK_COLUMNS,
  TASK_DEFINITION_COLUMNS,
  TASK_STATE_COLUMNS,
} from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import { fencingToken } from "../../../../src/domain/ids.js";
import { idempotencyKeyFor } from "../../../../src/domain/occurrence.js";
import { instant } from "../../../../src/domain/time.js";
import { buildRun } from "../../../domain/builders.js";

describe("the SQLite row mapping", () => {
  it("binds a run's values in RUN_COLUMNS order, equal to its row", () => {
    const runs = [
      buildRun(),
      buildRun({
        status: "succeeded",
        reason: "superseded",
        exclusive: true,
        late: true,
        claimToken: fencingToken("tok"),
        claimExpiresAt: instant(5),
        finishedAt: instant(9),
        error: "boom",
        result: { ok: [1, "two"] },
        missedCount: 2,
        missedUntil: instant(3),
      }),
    ];
    for (const run of runs) {
      const row = runToRow(run);
      expect(runValues(run)).toEqual(RUN_COLUMNS.map((name) => row[name]));
    }
  });

  it("stores a derived idempotency key empty and derives it on read; any other key is stored", () => {
    const scheduled = buildRun();
    const derived = idempotencyKeyFor(scheduled.taskId, "scheduled", scheduled.scheduledFor);
    expect(scheduled.idempotencyKey).toBe(derived);
    const backfill = buildRun({ trigger: "backfill" });
    const backfilled = {
      ...backfill,
      idempotencyKey: idempotencyKeyFor(backfill.taskId, "backfill", backfill.scheduledFor),
    };
    const unusual = buildRun({ idempotencyKey: "not-derived" });
    // A manual run keeps its client key, even one spelled like a derived key, and even an empty one.
    const manual = buildRun({ trigger: "manual", idempotencyKey: derived });
    const emptyManual = buildRun({ trigger: "manual", idempotencyKey: "" });
    const stored = [scheduled, backfilled, unusual, manual, emptyManual].map(
      (run) => runToRow(run).idempotency_key,
    );
    expect(stored).toEqual(["", "", "not-derived", derived, ""]);
    for (const run of [scheduled, backfilled, unusual, manual, emptyManual]) {
      expect(runFromRow(runToRow(run)).idempotencyKey).toBe(run.idempotencyKey);
    }
  });

  it("splits every task column into its definition or its state, once", () => {
    expect([...TASK_DEFINITION_COLUMNS, ...TASK_STATE_COLUMNS].sort()).toEqual(
      [...TASK_COLUMNS].sort(),
    );
  });
});
