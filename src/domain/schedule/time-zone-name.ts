/**
 * Validation of IANA time-zone names (docs/schedules.md#cron): names as the tz database spells them, backward links
 * included. Never falls back to the machine's zone: an unusable name is an error, not a default.
 */

import { TZ_NAMES_BEYOND_INTL } from "./tz-names-beyond-intl.js";

/** The zone used when a schedule names none. */
export const DEFAULT_TIME_ZONE = "UTC";

let canonicalByLowerCase: Map<string, string> | undefined;

function canonicalNames(): Map<string, string> {
  if (canonicalByLowerCase === undefined) {
    canonicalByLowerCase = new Map(
      Intl.supportedValuesOf("timeZone").map((name) => [name.toLowerCase(), name]),
    );
  }
  return canonicalByLowerCase;
}

const beyondIntlByLowerCase = new Map(
  TZ_NAMES_BEYOND_INTL.map((name) => [name.toLowerCase(), name]),
);

/** `GMT+0`, `GMT-0` and `GMT0` are tz database links; any other `UTC+1`-style text is an offset. */
const OFFSET_LIKE = /^(?:[+-]|(?:utc|gmt|ut|z)\s*[+-]\s*\d)/i;
const TZ_LINKS_THAT_LOOK_LIKE_OFFSETS = new Set(["GMT+0", "GMT-0", "GMT0"]);
const ALLOWED_CHARACTERS = /^[A-Za-z0-9_+\-/]+$/;

/** Intl's answers, by name: building a formatter to ask costs tens of microseconds. */
const accepted = new Map<string, boolean>();
const MAX_REMEMBERED = 1024;

function intlAccepts(name: string): boolean {
  let answer = accepted.get(name);
  if (answer === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: name });
      answer = true;
    } catch {
      // Intl throws a RangeError for a zone it does not know; that is the answer, not a failure.
      answer = false;
    }
    if (accepted.size >= MAX_REMEMBERED) accepted.clear();
    accepted.set(name, answer);
  }
  return answer;
}

/**
 * Checks a zone name. Returns `null` when it is usable, else a message saying why not.
 * Intl accepts names case-insensitively (`europe/berlin`), so the spelling is checked here: a name Intl
 * lists must match exactly, and any other (a link such as `US/Eastern`) must start each segment with an
 * upper-case letter or digit, as the tz database does, and match exactly the tz database's spelling when
 * tz-names-beyond-intl.ts holds it (`US/EASTERN` is refused).
 */
export function timeZoneProblem(name: string): string | null {
  if (name.length === 0) return "must not be empty";
  if (/\s/.test(name)) return `"${name}" is not a time zone: it contains spaces`;
  if (name.includes("\\") || name.includes("..") || name.startsWith("/") || name.endsWith("/")) {
    return `"${name}" is not a time zone: it looks like a file path`;
  }
  if (OFFSET_LIKE.test(name) && !TZ_LINKS_THAT_LOOK_LIKE_OFFSETS.has(name)) {
    return `"${name}" is an offset, not a time zone: use an IANA name such as Europe/Berlin`;
  }
  if (!ALLOWED_CHARACTERS.test(name) || name.includes("//")) {
    return `"${name}" is not an IANA time zone name`;
  }
  const listed = canonicalNames().get(name.toLowerCase());
  if (listed !== undefined && listed !== name) {
    return `"${name}" is misspelt: the time zone is "${listed}"`;
  }
  if (listed === undefined && !name.split("/").every((segment) => /^[A-Z]/.test(segment))) {
    return `"${name}" is not an IANA time zone name (names are case-sensitive, e.g. America/New_York)`;
  }
  const known = beyondIntlByLowerCase.get(name.toLowerCase());
  if (known !== undefined && known !== name) {
    return `"${name}" is misspelt: the time zone is "${known}"`;
  }
  if (!intlAccepts(name)) return `"${name}" is not a known IANA time zone`;
  return null;
}
