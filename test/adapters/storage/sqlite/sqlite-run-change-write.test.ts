/**
 * A run change written from the runs themselves (`SqliteStatements.writeRunChange`, what `changeRuns`
 * writes) leaves the row `runToRow` makes of the changed run: each state field in its column, stored as
 * the row mapping stores it, and nothing else touched.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { CLEAR_SECRETS } from "../../../../src/adapters/storage/shared/secret-keyring.js";
import { migrateSqlite } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { runToRow, runValues } from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import { SqliteStatements } from "../../../../src/adapters/storage/sqlite/sqlite-statements.js";
import { fencingToken } from "../../../../src/domain/ids.js";
import type { Run } from "../../../../src/domain/run.js";
import { instant } from "../../../../src/domain/time.js";
import { buildRun } from "../../../domain/builders.js";

function statementsWith(run: Run): SqliteStatements {
  const db = new Database(":memory:");
  migrateSqlite(db);
  // The run alone, without its task: this is about the run's own row.
  db.pragma("foreign_keys = OFF");
  const statements = new SqliteStatements(db, CLEAR_SECRETS);
  statements.insertRun([...runValues(run), "handler"]);
  return statements;
}

describe("a run change written from the runs", () => {
  it("stores every state field as the row mapping does, and only the fields that changed", () => {
    const before = buildRun({ status: "launching", attempt: 1, claimToken: fencingToken("t1") });
    const statements = statementsWith(before);
    const after: Run = {
      ...before,
      status: "succeeded",
      reason: "superseded",
      attempt: 2,
      failures: 1,
      notBefore: instant(before.notBefore + 5),
      claimToken: null,
      claimExpiresAt: instant(7),
      claimedBy: "replica-a",
      targetRunId: "target-1",
      launchedAt: instant(8),
      deadlineAt: instant(9),
      finishedAt: instant(10),
      latenessMs: 12,
      late: true,
      cancelRequestedAt: instant(11),
      error: "boom",
      result: { ok: [1, "two"] },
    };
    expect(statements.writeRunChange(before, after)).toBe(1);
    expect(statements.runById.get(before.id)).toEqual(runToRow(after));
    const back: Run = { ...after, late: false, result: null, error: null, reason: null };
    expect(statements.writeRunChange(after, back)).toBe(1);
    expect(statements.runById.get(before.id)).toEqual(runToRow(back));
  });

  it("writes nothing for a change that changed no field", () => {
    const run = buildRun();
    const statements = statementsWith(run);
    expect(statements.writeRunChange(run, { ...run })).toBe(1);
    expect(statements.runById.get(run.id)).toEqual(runToRow(run));
  });
});
