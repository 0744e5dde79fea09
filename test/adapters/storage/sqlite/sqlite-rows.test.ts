import { describe, expect, it } from "vitest";
import {
  RUN_COLUMNS,
  runToRow,
  runValues,
  TASK_COLUMNS,
  TASK_DEFINITION_COLUMNS,
  TASK_STATE_COLUMNS,
} from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import { fencingToken } from "../../../../src/domain/ids.js";
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

  it("splits every task column into its definition or its state, once", () => {
    expect([...TASK_DEFINITION_COLUMNS, ...TASK_STATE_COLUMNS].sort()).toEqual(
      [...TASK_COLUMNS].sort(),
    );
  });
});
