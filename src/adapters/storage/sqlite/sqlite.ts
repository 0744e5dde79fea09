/**
 * The public `sqlite()` store factory. It lives apart from the store so that the package's declarations
 * never name better-sqlite3's types (a consumer compiling with `skipLibCheck: false` has no
 * `@types/better-sqlite3`, docs/decisions.md#the-packages-declarations-name-no-driver-types), and so that the native module loads only when a
 * SQLite store is opened.
 */
import type { StoreFactory } from "../../../domain/ports/store.js";

/** An embedded SQLite database file (created if missing), or `":memory:"`. @default "punctual.db" */
export function sqlite(path = "punctual.db"): StoreFactory {
  return {
    open: async (options) =>
      (await import("./sqlite-store.js")).openSqliteStore({ ...options, path }),
  };
}
