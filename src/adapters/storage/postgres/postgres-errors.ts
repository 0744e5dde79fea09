/**
 * Reads the few PostgreSQL errors the store turns into outcomes (CONVENTIONS "Errors"): a unique violation
 * (`23505`) on a named index. Everything else propagates unchanged.
 */

/** The index or constraint a unique violation hit, or null when `error` is not a unique violation. */
export function uniqueViolation(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const code: unknown = Reflect.get(error, "code");
  const constraint: unknown = Reflect.get(error, "constraint");
  if (code !== "23505") return null;
  return typeof constraint === "string" ? constraint : "";
}

/**
 * The unique keys of the budget's leases: one launching/running run per exclusive task and per thread
 * (every active run holding a slot, migration 24, docs/storage.md#the-claim-path-on-postgresql) and one
 * lease per slot number (migration 31), which two claims may choose at once.
 */
export const SLOT_INDEXES: readonly string[] = [
  "claim_slots_task_uq",
  "claim_slots_thread_uq",
  "claim_slots_pkey",
];
/**
 * The occurrence key of a scheduled or backfilled run (migration 34, which folded
 * `runs_scheduled_occurrence_uq`, `runs_backfill_occurrence_uq` and the history index into it): in
 * admission, which inserts scheduled runs only, a violation is an occurrence already decided.
 */
export const OCCURRENCE_INDEX = "runs_occurrence_uq";

/**
 * SQLSTATE classes of a write that will fail again (docs/storage.md#writes-the-store-refuses): 22 data
 * exception (`\u0000` in text or jsonb, a value out of range), 23 integrity constraint, 54 program limit
 * (a value too large). Connection (08), resources (53), operator intervention (57), serialization (40)
 * and the rest are outages.
 */
const REFUSAL_CLASSES = ["22", "23", "54"];

/** Whether `error` is PostgreSQL refusing the value written, not failing to write. */
export function isPostgresRefusal(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code: unknown = Reflect.get(error, "code");
  return (
    typeof code === "string" &&
    /^[0-9A-Z]{5}$/.test(code) &&
    REFUSAL_CLASSES.includes(code.slice(0, 2))
  );
}
