/**
 * `columnArrays` writes PostgreSQL array text itself (not node-postgres): every value it can meet must
 * come back from `unnest` exactly as it went in, on the real server.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { columnArrays, textArray } from "../../../../src/adapters/storage/postgres/postgres-sql.js";
import type { Column } from "../../../../src/adapters/storage/postgres/postgres-sql.js";
import { postgresTypeParser } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

const COLUMNS: readonly Column[] = [
  { name: "t", type: "text" },
  { name: "i", type: "int4" },
  { name: "n", type: "int8" },
  { name: "at", type: "ts" },
  { name: "b", type: "bool" },
  { name: "j", type: "jsonb" },
];

const AWKWARD_TEXT = [
  "plain",
  "",
  "NULL",
  "null",
  'a "quoted" word',
  "back\\slash \\\\ two",
  '\\"',
  "{braces},commas, and spaces ",
  "  leading",
  "line\nbreak\ttab",
  "ünïcødé ✓ 日本",
  "'single'",
];

describe("columnArrays", () => {
  it("round-trips every kind of value through unnest", async () => {
    const rows: unknown[][] = AWKWARD_TEXT.map((text, k) => [
      text,
      k - 5,
      Number.MAX_SAFE_INTEGER - k,
      Date.UTC(2026, 10, 30) + k,
      k % 2 === 0,
      { text, list: [1, "two", null], nested: { quote: '"', slash: "\\" } },
    ]);
    rows.push([null, null, null, null, null, null]);
    const pool = database.pool();
    const result = await pool.query(
      "SELECT t, i, n::text AS n, (extract(epoch from (timestamptz 'epoch' + at * interval '1 millisecond')) * 1000)::int8::text AS at, b, j" +
        " FROM unnest($1::text[], $2::int4[], $3::int8[], $4::int8[], $5::bool[], $6::jsonb[])" +
        " WITH ORDINALITY AS u(t, i, n, at, b, j, k) ORDER BY k",
      columnArrays(COLUMNS, rows),
    );
    expect(
      (result.rows as Record<string, unknown>[]).map((row) => [
        row["t"],
        row["i"],
        row["n"] === null ? null : Number(row["n"]),
        row["at"] === null ? null : Number(row["at"]),
        row["b"],
        row["j"],
      ]),
    ).toEqual(rows);
  });

  it("writes a column of integers, or of texts needing no escape, as element by element", () => {
    const plain = [
      ["r-1", 1, Number.MAX_SAFE_INTEGER, Date.UTC(2026, 10, 30), true, "{}"],
      ["NULL", -2, 0, 0, false, '"x"'],
    ];
    expect(columnArrays(COLUMNS, plain)).toEqual([
      '{"r-1","NULL"}',
      "{1,-2}",
      `{${Number.MAX_SAFE_INTEGER},0}`,
      `{${Date.UTC(2026, 10, 30)},0}`,
      "{t,f}",
      '{"{}","\\"x\\""}',
    ]);
    // One null, one escape, one value of another type: element by element, to the same text.
    expect(
      columnArrays(COLUMNS.slice(0, 2), [
        ["a", 1],
        [null, null],
      ]),
    ).toEqual(['{"a",NULL}', "{1,NULL}"]);
    expect(columnArrays(COLUMNS.slice(5), [[{ a: 1 }], ["b"]])).toEqual(['{"{\\"a\\":1}","b"}']);
  });

  it("round-trips columns with no null and no escape through unnest", async () => {
    const rows: unknown[][] = [0, 1, 2].map((k) => [
      `run-${k} {x},y`,
      k - 1,
      Number.MAX_SAFE_INTEGER - k,
      Date.UTC(2026, 10, 30) + k,
      k % 2 === 0,
      `{"k":${k}}`,
    ]);
    const result = await database
      .pool()
      .query(
        "SELECT t, i, n::text AS n, at::text AS at, b, j::text AS j" +
          " FROM unnest($1::text[], $2::int4[], $3::int8[], $4::int8[], $5::bool[], $6::jsonb[])" +
          " WITH ORDINALITY AS u(t, i, n, at, b, j, k) ORDER BY k",
        columnArrays(COLUMNS, rows),
      );
    expect(
      (result.rows as Record<string, unknown>[]).map((row) => [
        row["t"],
        row["i"],
        Number(row["n"]),
        Number(row["at"]),
        row["b"],
        row["j"],
      ]),
    ).toEqual(rows.map((row) => [...row.slice(0, 5), `{"k": ${String(rows.indexOf(row))}}`]));
  });

  it("sends an empty batch as empty arrays", async () => {
    const result = await database
      .pool()
      .query(
        "SELECT count(*)::int4 AS n FROM unnest($1::text[], $2::int8[])",
        columnArrays(COLUMNS.slice(2, 4), []),
      );
    expect(result.rows).toEqual([{ n: 0 }]);
  });

  it("refuses a value that does not fit its column instead of sending it", () => {
    expect(() => columnArrays([{ name: "n", type: "int8" }], [[1.5]])).toThrow(TypeError);
    expect(() => columnArrays([{ name: "n", type: "int8" }], [["12"]])).toThrow(TypeError);
    expect(() => columnArrays([{ name: "b", type: "bool" }], [[1]])).toThrow(TypeError);
  });
});

describe("textArray", () => {
  it("round-trips every text and a null as a text[] parameter", async () => {
    const values = [...AWKWARD_TEXT, null];
    const result = await database
      .pool()
      .query("SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS u(t, k) ORDER BY k", [
        textArray(values),
      ]);
    expect((result.rows as Record<string, unknown>[]).map((row) => row["t"])).toEqual(values);
    expect(textArray([])).toBe("{}");
  });
});

describe("the store's type parsers", () => {
  it("read an int8 as a number when a double holds it exactly, and as text otherwise", async () => {
    if (database.url === null) throw new Error("no PostgreSQL test database");
    const pool = new pg.Pool({
      connectionString: database.url,
      max: 1,
      types: { getTypeParser: postgresTypeParser },
    });
    try {
      const result = await pool.query(
        "SELECT 1764460800123::int8 AS at, (-42)::int8 AS negative, 9007199254740993::int8 AS huge," +
          " 7::int4 AS small, '{\"a\":[1]}'::jsonb AS j, NULL::int8 AS nothing",
      );
      expect(result.rows[0]).toEqual({
        at: 1764460800123,
        negative: -42,
        huge: "9007199254740993",
        small: 7,
        j: { a: [1] },
        nothing: null,
      });
    } finally {
      await pool.end();
    }
  });
});
