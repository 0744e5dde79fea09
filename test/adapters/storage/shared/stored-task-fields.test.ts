/**
 * The stored-fields memo (src/adapters/storage/shared/stored-task-fields.ts): a task row's JSON text is
 * parsed and checked once per distinct text, its value shared (and so frozen), while a changed or
 * corrupted text is checked afresh, as every read of a hand-edited row must be.
 */
import { describe, expect, it } from "vitest";
import { decodeTaskFields } from "../../../../src/adapters/storage/shared/stored-task-fields.js";
import type { StoredTaskColumns } from "../../../../src/adapters/storage/shared/stored-task-fields.js";
import { CLEAR_SECRETS } from "../../../../src/adapters/storage/shared/secret-keyring.js";
import { taskToRow } from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import type { Instant } from "../../../../src/domain/time.js";
import { buildTask, webhookTarget } from "../../../contract/fixtures.js";

const CREATED = 0 as Instant;

function columnsOf(task = buildTask()): StoredTaskColumns {
  const row = taskToRow(task, CLEAR_SECRETS);
  return {
    schedule: row.schedule,
    target: row.target,
    context: row.context,
    options: row.options,
    metadata: row.metadata,
  };
}

describe("stored task fields, decoded from their text", () => {
  it("gives the same frozen value for the same text, and what a fresh parse gives", () => {
    const columns = columnsOf(buildTask({ target: webhookTarget() }));
    const first = decodeTaskFields(columns, CREATED);
    const again = decodeTaskFields({ ...columns }, CREATED);
    expect(first.defects).toEqual([]);
    expect(again.schedule).toBe(first.schedule);
    expect(again.target).toBe(first.target);
    expect(Object.isFrozen(first.target)).toBe(true);
    expect(Object.isFrozen(first.schedule)).toBe(true);
    // The memo returns what parsing the value itself gives.
    const parsed = decodeTaskFields(
      {
        schedule: (): unknown => JSON.parse(columns.schedule as string),
        target: (): unknown => JSON.parse(columns.target as string),
        context: (): unknown => JSON.parse(columns.context as string),
        options: (): unknown => JSON.parse(columns.options as string),
        metadata: (): unknown => JSON.parse(columns.metadata as string),
      },
      CREATED,
    );
    expect(parsed.schedule).toEqual(first.schedule);
    expect(parsed.target).toEqual(first.target);
    expect(parsed.options).toEqual(first.options);
    expect(parsed.schedule).not.toBe(first.schedule);
  });

  it("checks a corrupted text as defective on every read, and its repair as sound", () => {
    const columns = columnsOf();
    const corrupted = { ...columns, schedule: '{"type":"weekly"}' };
    for (let read = 0; read < 2; read++) {
      const fields = decodeTaskFields(corrupted, CREATED);
      expect(fields.defects).toHaveLength(1);
      expect(fields.defects[0]?.field).toBe("schedule");
      expect(fields.defects[0]?.message).toMatch(/type/);
      expect(fields.schedule.type).toBe("once");
    }
    expect(decodeTaskFields({ ...columns, target: "{not json" }, CREATED).defects).toEqual([
      { field: "target", message: "not JSON" },
    ]);
    expect(decodeTaskFields(columns, CREATED).defects).toEqual([]);
  });

  it("keeps the values of texts too large to remember correct", () => {
    const big = buildTask({
      target: { ...webhookTarget(), input: { text: "x".repeat(20_000) } },
    });
    const columns = columnsOf(big);
    const first = decodeTaskFields(columns, CREATED);
    const again = decodeTaskFields(columns, CREATED);
    expect(again.target).toEqual(first.target);
    expect(again.target).not.toBe(first.target);
  });
});
