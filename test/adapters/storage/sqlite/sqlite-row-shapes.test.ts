import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  runRowOf,
  taskContextRowOf,
  taskReadRowOf,
} from "../../../../src/adapters/storage/sqlite/sqlite-row-shapes.js";
import {
  RUN_COLUMNS,
  TASK_CONTEXT_COLUMNS,
} from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import type { RunRow } from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import {
  RowReader,
  TASK_READ_COLUMNS,
} from "../../../../src/adapters/storage/sqlite/sqlite-statements.js";

/** What a shaper makes of the values 0, 1, 2...: its keys in order, each with its index. */
const probed = (shape: (values: readonly unknown[]) => unknown, width: number): unknown =>
  shape(Array.from({ length: width }, (_, i) => i));
const indexed = (columns: readonly string[]): Record<string, number> =>
  Object.fromEntries(columns.map((name, i) => [name, i]));

describe("the SQLite row shapes", () => {
  it("put value i under column i of their column lists, in order", () => {
    const cases: [(values: readonly unknown[]) => unknown, readonly string[]][] = [
      [runRowOf, RUN_COLUMNS],
      [taskReadRowOf, TASK_READ_COLUMNS],
      [taskContextRowOf, TASK_CONTEXT_COLUMNS],
    ];
    for (const [shape, columns] of cases) {
      const row = probed(shape, columns.length) as Record<string, number>;
      expect(Object.keys(row)).toEqual([...columns]);
      expect(row).toEqual(indexed(columns));
    }
  });

  it("a row reader refuses a shape that differs from its columns", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (a INTEGER, b INTEGER)");
    db.exec("INSERT INTO t VALUES (1, 2)");
    type Row = { a: number; b: number };
    const swapped = (v: readonly unknown[]): Row => ({ a: v[1], b: v[0] }) as Row;
    const missing = (v: readonly unknown[]): Row => ({ a: v[0] }) as Row;
    expect(() => new RowReader<[], Row>(db, "SELECT a, b FROM t", ["a", "b"], swapped)).toThrow(
      /shape differs/,
    );
    expect(() => new RowReader<[], Row>(db, "SELECT a, b FROM t", ["a", "b"], missing)).toThrow(
      /shape differs/,
    );
    const reader = new RowReader<[], Row>(db, "SELECT a, b FROM t", ["a", "b"]);
    expect(reader.all()).toEqual([{ a: 1, b: 2 }]);
    const shaped = new RowReader<[], Row>(db, "SELECT a, b FROM t", ["a", "b"], (v) => ({
      a: v[0] as number,
      b: v[1] as number,
    }));
    expect(shaped.get()).toEqual({ a: 1, b: 2 });
    db.close();
  });

  it("a run row shaped by its literal equals the row built by name", () => {
    const names: readonly (keyof RunRow)[] = RUN_COLUMNS;
    const values = names.map((name, i) => `${name}:${String(i)}`);
    expect(runRowOf(values)).toEqual(Object.fromEntries(names.map((n, i) => [n, values[i]])));
  });
});
