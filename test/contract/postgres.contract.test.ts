/**
 * The store contract on PostgreSQL, in this file's own database (the real server, or PGlite when no server
 * is reachable outside CI; see test/helpers/postgres.ts). Each test gets the migrated schema emptied.
 */
import { afterAll } from "vitest";
import { createPostgresTestDatabase } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import type { PostgresPool } from "../../src/adapters/storage/postgres/postgres-pool.js";
import { describeStoreContract } from "./store-contract.js";

let database: Promise<PostgresTestDatabase> | null = null;
let corruptPool: PostgresPool | null = null;

afterAll(async () => {
  if (database !== null) await (await database).drop();
});

describeStoreContract(
  "postgres",
  async () => {
    database ??= createPostgresTestDatabase();
    return (await database).openEmptyStore();
  },
  async (_store, id, column, raw) => {
    if (database === null) throw new Error("no store is open");
    // The contract's stores share one recycled schema: the one that holds a tasks table.
    corruptPool ??= (await database).pool(1);
    const pool = corruptPool;
    const found = await pool.query(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'tasks'",
    );
    const row = found.rows[0] as { table_schema: string } | undefined;
    if (row === undefined) throw new Error("no tasks table");
    await pool.query(`UPDATE "${row.table_schema}".tasks SET ${column} = $1::jsonb WHERE id = $2`, [
      raw,
      id,
    ]);
  },
);
