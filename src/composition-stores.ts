/**
 * The stores and the token service the CLI opens (docs/operations.md, docs/security.md): a store from a
 * database URL, the token service over a store, and a database opened only to manage its tokens. Part of
 * the composition root.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ValidationError } from "./domain/errors.js";
import type { Store, StoreFactory } from "./domain/ports/store.js";
import { TokenService } from "./application/access/token-service.js";
import type { PostgresOptions } from "./adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";

/**
 * A store from a database URL (docs/operations.md): `postgres://...`, `sqlite:PATH`, or a file path.
 * `postgresOptions` apply to a PostgreSQL URL only (a pooler, a direct URL for LISTEN).
 */
export function storeFromDatabaseUrl(
  url: string,
  postgresOptions: Omit<PostgresOptions, "schema"> = {},
): StoreFactory {
  // Each store (and its driver) is loaded when opened: a worker on SQLite never loads `pg`, and none
  // parses a driver before it listens for signals (docs/operations.md#on-a-loaded-host).
  if (/^postgres(ql)?:\/\//i.test(url)) {
    return {
      open: async (context) =>
        (await import("./adapters/storage/postgres/postgres-store.js"))
          .postgres(url, postgresOptions)
          .open(context),
    };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1];
  if (scheme !== undefined && !/^sqlite$/i.test(scheme)) {
    throw ValidationError.of(
      "database",
      `${scheme}:// is not a database punctual runs on: give a postgres:// URL, a sqlite: URL or a file path`,
    );
  }
  let path = url;
  if (url.startsWith("sqlite://")) path = url.slice("sqlite://".length);
  else if (url.startsWith("sqlite:")) path = url.slice("sqlite:".length);
  return {
    open: async (context) => {
      const folder = dirname(resolve(path));
      if (path !== ":memory:" && !existsSync(folder)) {
        throw ValidationError.of(
          "database",
          `the folder of the SQLite database ${path} does not exist (${folder}): create it first`,
        );
      }
      return (await import("./adapters/storage/sqlite/sqlite.js")).sqlite(path).open(context);
    },
  };
}

/** The token service over a store's `api_tokens` (docs/security.md). */
export function tokenServiceFor(
  store: Store,
  newId: () => string = createIdGenerator(),
): TokenService {
  if (store.apiTokens === undefined) throw new Error(`the ${store.kind} store keeps no API tokens`);
  return new TokenService({
    tokens: store.apiTokens,
    newSecret: () => `pct_${randomBytes(32).toString("base64url")}`,
    hash: (secret) => createHash("sha256").update(secret, "utf8").digest("hex"),
    newId,
  });
}

/** Opens a database only to manage its tokens (`punctual token ...`); `close()` when done. */
export async function openTokenAdmin(
  factory: StoreFactory,
): Promise<{ tokens: TokenService; close(): Promise<void> }> {
  const store = await factory.open({ newId: createIdGenerator() });
  await store.migrate();
  return { tokens: tokenServiceFor(store), close: () => store.close() };
}
