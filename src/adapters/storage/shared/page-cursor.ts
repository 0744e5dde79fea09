/**
 * Page cursors of every store: the last row's sort key, as base64url JSON. Opaque to
 * callers; a cursor a store did not make is refused as invalid input.
 */
import { ValidationError } from "../../../domain/errors.js";
import type { Page } from "../../../domain/ports/queries.js";

/** A sort key: an instant and an id (tasks: `created_at, id`; runs: `scheduled_for, id`). */
export type CursorKey = readonly [number, string];

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

/** @throws validation_failed when `cursor` was not made by `encodeCursor` */
export function decodeCursor(cursor: string): CursorKey {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch (error) {
    throw new ValidationError([{ field: "cursor", message: "is not a cursor of this listing" }], {
      cause: error,
    });
  }
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    Number.isSafeInteger(value[0]) &&
    typeof value[1] === "string"
  ) {
    return [value[0] as number, value[1]];
  }
  throw ValidationError.of("cursor", "is not a cursor of this listing");
}

/** The sort key of a listing by name (calendars): `[0, name]`. */
export function nameKey(name: string): CursorKey {
  return [0, name];
}

/** @throws validation_failed when `cursor` was not made from a `nameKey` */
export function decodeNameCursor(cursor: string): string {
  const [zero, name] = decodeCursor(cursor);
  if (zero !== 0) throw ValidationError.of("cursor", "is not a cursor of this listing");
  return name;
}

/** Orders two sort keys ascending. */
export function compareKeys(a: CursorKey, b: CursorKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] === b[1]) return 0;
  return a[1] < b[1] ? -1 : 1;
}

/**
 * The page of `rows`, read one row past `limit` in page order: the first `limit`, and a cursor after the
 * last of them when the extra row says another page follows.
 */
export function pageOf<T>(
  rows: readonly T[],
  limit: number,
  keyOf: (item: T) => CursorKey,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const more = rows.length > items.length && last !== undefined;
  return { items, nextCursor: more ? encodeCursor(keyOf(last)) : null };
}
