/**
 * The schema the store lives in: the only identifier interpolated into SQL text, validated and quoted once
 * when the store is built (CONVENTIONS "SQL").
 */

/** A plain PostgreSQL identifier: letters, digits and `_`, not starting with a digit, at most 63 bytes. */
const SCHEMA_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface SchemaName {
  /** The name as given, e.g. `punctual`. */
  readonly name: string;
  /** The quoted identifier to put in SQL text, e.g. `"punctual"`. */
  readonly quoted: string;
  /** A stable 32-bit key for this schema, the second half of the store's advisory lock keys. */
  readonly lockKey: number;
}

/** The default schema: punctual's tables never mix with the application's own. */
export const DEFAULT_SCHEMA = "punctual";

/** Validates and quotes a schema name; throws a RangeError for anything but a plain identifier. */
export function schemaName(name: string = DEFAULT_SCHEMA): SchemaName {
  if (!SCHEMA_NAME_PATTERN.test(name)) {
    throw new RangeError(
      `invalid PostgreSQL schema name ${JSON.stringify(name)}: use letters, digits and _ (at most 63)`,
    );
  }
  return { name, quoted: `"${name}"`, lockKey: lockKeyOf(name) };
}

/** FNV-1a over the name, folded into a signed 32-bit integer (the `int4` of `pg_advisory_lock(int4, int4)`). */
function lockKeyOf(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * Advisory locks are taken as `pg_advisory_lock(kind, schema.lockKey)`, so two punctual schemas in one
 * database never wait for each other. The kind spells "punc" in ASCII.
 */
export const MIGRATION_LOCK_KIND = 0x70756e63;
