/**
 * Opaque page cursors: base64url of the last item's sort key `[instant, id]`. A cursor that does not
 * decode is a validation error on the `cursor` field.
 */
import { ValidationError } from "../../../domain/errors.js";

export interface CursorKey {
  readonly at: number;
  readonly id: string;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.at, key.id]), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string | undefined): CursorKey | null {
  if (cursor === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch (error) {
    throw new ValidationError([{ field: "cursor", message: "is not a cursor of this listing" }], {
      cause: error,
    });
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    typeof value[1] !== "string"
  ) {
    throw ValidationError.of("cursor", "is not a cursor of this listing");
  }
  return { at: Number(value[0]), id: value[1] };
}
