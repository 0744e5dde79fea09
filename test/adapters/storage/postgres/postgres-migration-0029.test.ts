/**
 * Migration 29 (docs/schedules.md#moved-occurrences) adds the marker of a run from a moved occurrence:
 * a nullable column placed last; the runs of an existing database read back unmarked.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
} from "../../../../src/adapters/storage/postgres/postgres-migrations.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import { admitDue, insertTask } from "../../../contract/store-steps.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 29 (a run from a moved occurrence says so)", () => {
  it("adds a nullable column last, and the runs already stored read back unmarked", async () => {
    const pool = database.pool(2);
    const schema = database.freshSchema();
    const q = `"${schema}"`;
    const before = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    await insertTask(before, { options: { overlap: "allow_all" } });
    await admitDue(before, minute(1));
    const [run] = (await admitDue(before, minute(2))).queuedRuns;
    await before.close();
    // The database as the code before migration 29 left it.
    await pool.query(`ALTER TABLE ${q}.runs DROP COLUMN moved;
      DELETE FROM ${q}.schema_migrations WHERE version = 29`);

    await migratePostgres(pool, schemaName(schema), POSTGRES_MIGRATIONS);
    const columns = await pool.query(
      `SELECT column_name, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'runs' ORDER BY ordinal_position DESC LIMIT 1`,
      [schema],
    );
    expect(columns.rows).toEqual([
      { column_name: "moved", is_nullable: "YES", column_default: null },
    ]);
    const stored = await pool.query(`SELECT count(*)::int AS n FROM ${q}.runs WHERE moved IS NULL`);
    expect(stored.rows).toEqual([{ n: 2 }]);
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await after.runs.findRun(ALL, run!.id)).toEqual({ ...run, moved: false });
    await after.close();
  });
});
