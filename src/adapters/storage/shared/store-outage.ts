/**
 * Which thrown errors mean the database could not answer, rather than refused what was asked
 * (docs/errors.md#http-only-problems): the HTTP API answers those 503 `database_unavailable` with
 * `Retry-After`, not a generic 500. Read from the error's shape only (`code`, `message`), so that nothing
 * here imports a driver.
 */

/** Why the database did not answer: it was too slow, or it could not be reached. */
export type StoreOutage = "timeout" | "unavailable";

/** SQLSTATEs of a statement the server cancelled for its time (57014: statement timeout, lock timeout). */
const TIMEOUT_STATES = new Set(["57014", "55P03", "25P03"]);
/**
 * SQLSTATE classes and codes of a server that could not serve: 08 connection exception, 53 insufficient
 * resources (too many connections), 57P01-57P03 shutting down or starting, 3D000 the database gone.
 */
const UNREACHABLE_CLASSES = ["08", "53"];
const UNREACHABLE_STATES = new Set(["57P01", "57P02", "57P03", "3D000"]);
/** Node's socket errors on the way to the server. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** SQLite's result codes of a file it could not use now: locked past the busy timeout, a full disk, I/O. */
const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR)/;
/** node-postgres's own messages when it gives up: its query or connect timeout, a connection that died. */
const CLIENT_TIMEOUT_MESSAGES = [
  /^Query read timeout$/,
  /timeout exceeded when trying to connect/i,
];
const CLIENT_UNREACHABLE_MESSAGES = [
  /^Connection terminated/,
  /is not queryable/,
  /^Client was closed/,
  /^Cannot use a pool after calling end/,
];

/** The outage `error` shows, or null when it is something else (a bug, a refused value). */
export function storeOutage(error: unknown, depth = 0): StoreOutage | null {
  if (typeof error !== "object" || error === null || depth > 4) return null;
  const code: unknown = Reflect.get(error, "code");
  const message: unknown = Reflect.get(error, "message");
  if (typeof code === "string") {
    if (TIMEOUT_STATES.has(code)) return "timeout";
    if (code.startsWith("SQLITE_BUSY")) return "timeout";
    if (
      UNREACHABLE_STATES.has(code) ||
      (/^[0-9A-Z]{5}$/.test(code) && UNREACHABLE_CLASSES.includes(code.slice(0, 2))) ||
      SOCKET_CODES.has(code) ||
      SQLITE_CODES.test(code)
    ) {
      return "unavailable";
    }
  }
  if (typeof message === "string") {
    if (CLIENT_TIMEOUT_MESSAGES.some((pattern) => pattern.test(message))) return "timeout";
    if (CLIENT_UNREACHABLE_MESSAGES.some((pattern) => pattern.test(message))) return "unavailable";
  }
  // A driver may wrap the socket error it met (`cause`).
  const cause: unknown = Reflect.get(error, "cause");
  return storeOutage(cause, depth + 1);
}
