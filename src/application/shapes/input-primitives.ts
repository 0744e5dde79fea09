/**
 * The small shapes every input and view is made of: any JSON value, a duration as users write it, an
 * instant as the API writes it.
 */
import * as z from "zod";
import type { JsonValue } from "../../domain/target.js";
import { documentedAs } from "./documented-shape.js";

/**
 * Any JSON value: a target's `input`, a run's `result`. Documented as such rather than as the recursive
 * union zod checks, which says nothing more and which generated TypeScript cannot express.
 */
export const jsonValueSchema: z.ZodType<JsonValue> = documentedAs(
  z.json(),
  z.unknown().meta({ description: "any JSON value" }),
);
/** A duration as users write it: ISO-8601 of fixed length (`PT5M`, `P1D`) or a number of seconds. */
export const durationInputSchema = z.union([z.string(), z.number()]).meta({
  description:
    "a duration of fixed length: ISO-8601 (`PT5M`, `P1DT2H`), short (`5m`, `1h30m`, `90s`, `2d`) or seconds",
});
/** An instant as the API writes it. */
export const instantSchema = z
  .string()
  .meta({ format: "date-time", description: "RFC 3339, UTC, `Z`" });
