/**
 * The store contract on PostgreSQL, in this file's own database (the real server, or PGlite when no server
 * is reachable outside CI; see test/helpers/postgres.ts). Each test gets the migrated schema emptied.
 */
import { afterAll } from "vitest";
import { createPostgresTestDatabase } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { describeStoreContract } from "./store-contract.js";

let database: Promise<PostgresTestDatabase> | null = null;

afterAll(async () => {
  if (database !== null) await (await database).drop();
});

describeStoreContract("postgres", async () => {
  database ??= createPostgresTestDatabase();
  return (await database).openEmptyStore();
});
