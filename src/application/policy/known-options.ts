/**
 * Options objects that refuse keys they do not know (docs/library.md#options-are-checked): a misspelled
 * option (`max_concurrent_runs` for `maxConcurrentRuns`) fails at once and names the closest known one,
 * instead of being ignored while the default applies.
 */
import { closestMatch } from "leven";
import { ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";

type Unlisted<T, K extends readonly PropertyKey[]> = Exclude<keyof T, K[number]>;

/**
 * The keys of `T`, all of them: a key added to `T` and not listed here does not compile.
 *
 * @example
 * const KEYS = optionKeys<PolicyOptions>()(["maxConcurrentRuns", "leaseSeconds", ...]);
 */
export function optionKeys<T>() {
  return <const K extends readonly (keyof T & string)[]>(
    keys: K & ([Unlisted<T, K>] extends [never] ? unknown : { readonly unlisted: Unlisted<T, K> }),
  ): readonly string[] => keys;
}

/** Lower case without separators, so `max_concurrent_runs` and `maxConcurrentRuns` meet. */
function folded(key: string): string {
  return key.toLowerCase().replace(/[_\-\s]/g, "");
}

/** The known key closest to `key`, when one is close enough to be a misspelling of it. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const target = folded(key);
  const candidates = known.map(folded);
  const match = closestMatch(target, candidates, {
    maxDistance: Math.max(2, Math.floor(target.length / 3)),
  });
  return match === undefined ? undefined : known[candidates.indexOf(match)];
}

/** The unknown keys of `value` as field errors under `path`, each naming the closest known key. */
export function unknownOptions(value: unknown, known: readonly string[], path = ""): FieldError[] {
  if (typeof value !== "object" || value === null) return [];
  const errors: FieldError[] = [];
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const near = closestKey(key, known);
    errors.push({
      field: path === "" ? key : `${path}.${key}`,
      message:
        near === undefined
          ? `unknown option (known: ${known.join(", ")})`
          : `unknown option; did you mean ${near}?`,
    });
  }
  return errors;
}

/** @throws validation_failed naming each unknown key and the closest known one */
export function refuseUnknownOptions(errors: readonly FieldError[]): void {
  if (errors.length > 0) throw new ValidationError(errors);
}
