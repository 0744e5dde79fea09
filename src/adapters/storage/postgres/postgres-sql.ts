/**
 * SQL text builders shared by the repositories: column lists, epoch-ms <-> `timestamptz` conversions and
 * batch writes through arrays and `unnest`. They only assemble constant identifiers; values always travel
 * as `$n` parameters with explicit casts.
 */
import { createHash } from "node:crypto";
import type { PostgresStatement } from "./postgres-pool.js";

/** How a column travels: `ts` columns are `timestamptz` in the table and epoch ms (`int8`) on the wire. */
export type ColumnType = "text" | "int4" | "int8" | "bool" | "ts" | "jsonb";

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
}

const WIRE_ARRAY_TYPE: Readonly<Record<ColumnType, string>> = {
  text: "text[]",
  int4: "int4[]",
  int8: "int8[]",
  bool: "bool[]",
  ts: "int8[]",
  jsonb: "jsonb[]",
};

/** Epoch milliseconds (an `int8` expression) as `timestamptz`; exact over the whole range of both. */
export function msToTimestamp(expression: string): string {
  return `(timestamptz 'epoch' + ${expression} * interval '1 millisecond')`;
}

/** A `timestamptz` expression as epoch milliseconds (`int8`); exact, since `extract` yields numeric. */
export function timestampToMs(expression: string): string {
  return `(extract(epoch from ${expression}) * 1000)::int8`;
}

/** `a.col, ...` with timestamps converted to epoch ms, each under its own column name. */
export function selectList(columns: readonly Column[], alias: string): string {
  return columns
    .map((c) =>
      c.type === "ts"
        ? `${timestampToMs(`${alias}.${c.name}`)} AS ${c.name}`
        : `${alias}.${c.name}`,
    )
    .join(", ");
}

/** `unnest($1::text[], ...) AS u(col, ...)`: one row per array index, parameters from `first` on. */
export function unnestSource(columns: readonly Column[], first = 1): string {
  const arrays = columns.map((c, i) => `$${first + i}::${WIRE_ARRAY_TYPE[c.type]}`).join(", ");
  return `unnest(${arrays}) AS u(${columns.map((c) => c.name).join(", ")})`;
}

/** The value of `column` in the unnested row `u`, converted to the table's type. */
export function unnestValue(column: Column): string {
  return column.type === "ts" ? msToTimestamp(`u.${column.name}`) : `u.${column.name}`;
}

/** `INSERT INTO table (cols) SELECT ... FROM unnest(...)`; append `ON CONFLICT` / `RETURNING` as needed. */
export function unnestInsert(table: string, columns: readonly Column[]): string {
  const names = columns.map((c) => c.name).join(", ");
  const values = columns.map(unnestValue).join(", ");
  return `INSERT INTO ${table} (${names}) SELECT ${values} FROM ${unnestSource(columns)}`;
}

/**
 * `UPDATE table AS t SET col = u.col, ... FROM unnest(...) WHERE t.id = u.id`: rewrites every listed
 * column of the rows whose `id` (the first column) matches; append conditions with `AND ...`.
 */
export function unnestUpdate(table: string, columns: readonly Column[]): string {
  const [key, ...rest] = columns;
  if (key?.name !== "id") throw new TypeError("the first column of a batch update must be id");
  const sets = rest.map((c) => `${c.name} = ${unnestValue(c)}`).join(", ");
  return `UPDATE ${table} AS t SET ${sets} ${keyedUnnestFrom(columns)}`;
}

/**
 * `FROM unnest(...) AS u WHERE t.id = u.id AND t.id = ANY($1)` for a batch `UPDATE ... AS t` whose first
 * column (and parameter) is its key, `id` (or `task_id`, the key of `task_state`): with `t.id = ANY($1)` beside the join, the rows to change are found
 * through the primary key once the table has statistics (a hash join over the whole table was the
 * planner's choice on a small or freshly analysed table). A table never analyzed (`reltuples` unknown)
 * can still be read whole: see docs/storage.md#the-claim-path-on-postgresql. (Rewriting the row at the
 * `ctid` a lateral primary-key probe found was tried, and was worse: the planner hashed the whole table
 * by `ctid`.)
 */
export function keyedUnnestFrom(columns: readonly Column[]): string {
  const key = columns[0]?.name === "task_id" ? "task_id" : "id";
  return `FROM ${unnestSource(columns)} WHERE t.${key} = u.${key} AND t.${key} = ANY($1::text[])`;
}

/**
 * Turns rows (one value per column, in column order) into one parameter per column for `unnest`: the
 * column's array as PostgreSQL array text (`{...}`, `arrayText`). node-postgres would build the same text
 * from a JS array, but quotes and escapes every element with two regular expressions (numbers included),
 * which was a visible share of a replica's CPU and garbage in the benchmark's burst.
 */
export function columnArrays(
  columns: readonly Column[],
  rows: readonly (readonly unknown[])[],
): string[] {
  const out = new Array<string>(columns.length);
  // One column's values at a time, in one array reused for every column: made generic (filled) at
  // once, so that its elements' kind never changes with a column's values (V8 would deoptimise).
  const values = new Array<unknown>(rows.length).fill(null);
  for (let i = 0; i < columns.length; i++) {
    for (let r = 0; r < rows.length; r++) values[r] = rows[r]?.[i];
    out[i] = arrayText((columns[i] as Column).type, values);
  }
  return out;
}

/**
 * `{a,b,NULL}`: `values` as a `type[]` parameter reads them. A column of integers only, or of texts
 * that need no escaping (ids, tokens, statuses: most of what a write sends), is joined in one step,
 * with no string made per element; any other column goes element by element (`elementwise`), to the
 * same text.
 */
export function arrayText(type: ColumnType, values: readonly unknown[]): string {
  if (values.length === 0) return "{}";
  switch (type) {
    case "int4":
    case "int8":
    case "ts":
      if (allIntegers(values)) return `{${values.join(",")}}`;
      break;
    case "text":
    case "jsonb":
      if (allPlainTexts(values)) return `{"${values.join('","')}"}`;
      break;
    case "bool":
      break;
  }
  return elementwise(type, values);
}

/** Whether every value is a safe integer, written by `join` as `String` writes it. */
function allIntegers(values: readonly unknown[]): boolean {
  for (let r = 0; r < values.length; r++) {
    const value = values[r];
    if (typeof value !== "number" || !Number.isSafeInteger(value)) return false;
  }
  return true;
}

/** Whether every value is a string that, quoted, needs no escape (no `"`, no `\`). */
function allPlainTexts(values: readonly unknown[]): boolean {
  for (let r = 0; r < values.length; r++) {
    const value = values[r];
    if (typeof value !== "string" || value.indexOf('"') !== -1 || value.indexOf("\\") !== -1) {
      return false;
    }
  }
  return true;
}

/**
 * `arrayText` element by element: one loop per type, so that the type is looked at once per column,
 * not once per value; text is quoted after two `indexOf` scans instead of a regular expression (the
 * burst's profile had the expression at about 2% of a replica's CPU).
 */
function elementwise(type: ColumnType, values: readonly unknown[]): string {
  const parts = new Array<string>(values.length);
  switch (type) {
    case "int4":
    case "int8":
    case "ts":
      for (let r = 0; r < values.length; r++) parts[r] = integerElement(type, values[r]);
      break;
    case "bool":
      for (let r = 0; r < values.length; r++) parts[r] = boolElement(values[r]);
      break;
    case "text":
    case "jsonb":
      for (let r = 0; r < values.length; r++) parts[r] = textElement(type, values[r]);
      break;
  }
  return `{${parts.join(",")}}`;
}

/**
 * `{"a","b",NULL}`: `values` as a `text[]` parameter reads it. node-postgres would make the same text of
 * the array itself, with two regular expressions per element.
 */
export function textArray(values: readonly (string | null)[]): string {
  return arrayText("text", values);
}

function integerElement(type: ColumnType, value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new TypeError(`not an integer for an ${type} column: ${JSON.stringify(value)}`);
  }
  return String(value);
}

function boolElement(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value !== "boolean") throw new TypeError(`not a boolean: ${JSON.stringify(value)}`);
  return value ? "t" : "f";
}

function textElement(type: ColumnType, value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  const text =
    typeof value === "string"
      ? value
      : type === "jsonb" || typeof value !== "number"
        ? JSON.stringify(value)
        : String(value);
  // Quoted always: a quoted element is never read as NULL, and braces, commas and spaces are kept.
  return text.indexOf('"') === -1 && text.indexOf("\\") === -1
    ? `"${text}"`
    : `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** `'a', 'b'`: a constant list of SQL string literals (statuses from the domain's `as const` lists). */
export function literalList(values: readonly string[]): string {
  return values
    .map((v) => {
      if (!/^[a-z_]+$/.test(v)) throw new TypeError(`not a constant name: ${v}`);
      return `'${v}'`;
    })
    .join(", ");
}

/**
 * `text` as a named statement for the hot path. The name is a hash of the text, so stores on other
 * schemas sharing a pool never clash. Measured on the benchmark's burst: the run row's select list (30
 * columns, most of them timestamps converted to epoch ms) cost 2.6 ms per execution sent as text (parse
 * and plan every time) against 0.7 ms prepared, and parsing was most of the database's CPU per fire.
 */
export function prepared(text: string): PostgresStatement {
  const digest = createHash("sha256").update(text).digest("base64url").slice(0, 24);
  return { name: `punctual_${digest}`, text };
}

/** Every statement of `statements` as a named statement (`prepared`). */
export function preparedAll<K extends string>(
  statements: Readonly<Record<K, string | PostgresStatement>>,
): Readonly<Record<K, PostgresStatement>> {
  const out = {} as Record<K, PostgresStatement>;
  for (const key of Object.keys(statements) as K[]) {
    const value: string | PostgresStatement = statements[key];
    out[key] = typeof value === "string" ? prepared(value) : value;
  }
  return out;
}
