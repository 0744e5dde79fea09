/**
 * Signing secrets sealed at rest on PostgreSQL (docs/security.md#secrets-at-rest): the columns hold no
 * secret in clear, a store with a new key (the old one kept as previous) reseals every task, and one
 * without the key refuses to open them.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { secretKeyring } from "../../../../src/adapters/storage/shared/secret-keyring.js";
import type { Instant } from "../../../../src/domain/time.js";
import { ALL, buildTask, webhookTarget } from "../../../contract/fixtures.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../../helpers/postgres.js";

let database: Promise<PostgresTestDatabase> | null = null;
afterAll(async () => {
  if (database !== null) await (await database).drop();
});

describe("sealed signing secrets on PostgreSQL", () => {
  it("keep both secrets out of the columns, reseal under a new key, and refuse without one", async () => {
    database ??= createPostgresTestDatabase();
    const db = await database;
    const schema = db.freshSchema();
    const key = randomBytes(32);
    const store = await db.openStore({ schema, secrets: secretKeyring(key) });
    const task = {
      ...buildTask({ target: webhookTarget() }),
      webhookSecret: "current-secret-AAAAAAAAAAAAAAAA",
      retiringSecret: {
        secret: "retiring-secret-BBBBBBBBBBBBBBB",
        until: 1_900_000_000_000 as Instant,
      },
    };
    await store.tasks.insertTask(task);
    const read = await store.tasks.findTask(ALL, task.id);
    expect(read?.webhookSecret).toBe(task.webhookSecret);
    expect(read?.retiringSecret).toEqual(task.retiringSecret);
    const raw = await db
      .pool()
      .query(`SELECT webhook_secret, retiring_secret FROM "${schema}".tasks`);
    expect(JSON.stringify(raw.rows)).not.toContain("secret-");
    expect(JSON.stringify(raw.rows)).toContain("pcs1:");

    const newKey = randomBytes(32);
    const rotated = await db.openStore({ schema, secrets: secretKeyring(newKey, [key]) });
    expect(await rotated.resealSecrets()).toBe(1);
    expect(await rotated.resealSecrets()).toBe(0);
    const after = await db.openStore({ schema, secrets: secretKeyring(newKey) });
    expect((await after.tasks.findTask(ALL, task.id))?.webhookSecret).toBe(task.webhookSecret);
    const keyless = await db.openStore({ schema });
    await expect(keyless.tasks.findTask(ALL, task.id)).rejects.toThrow(/PUNCTUAL_SECRET_KEY/);
    for (const open of [store, rotated, after, keyless]) await open.close();
  });
});
