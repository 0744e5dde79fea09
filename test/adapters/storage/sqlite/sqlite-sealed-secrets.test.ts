/**
 * Signing secrets sealed at rest in the SQLite file (docs/security.md#secrets-at-rest): with a key, neither
 * the database file nor its WAL holds a secret in clear; a restart with a new key (the old one kept as
 * previous) reseals every task; without the key a sealed database refuses to open its secrets.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { secretKeyring } from "../../../../src/adapters/storage/shared/secret-keyring.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import type { Instant } from "../../../../src/domain/time.js";
import { ALL, buildTask, webhookTarget } from "../../../contract/fixtures.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sealed");
afterAll(() => {
  files.remove();
});

function fileText(path: string): string {
  return ["", "-wal"]
    .map((suffix) => {
      try {
        return readFileSync(`${path}${suffix}`).toString("latin1");
      } catch {
        return "";
      }
    })
    .join("");
}

describe("sealed signing secrets on SQLite", () => {
  it("keep the secret and the retiring secret out of the file, and read back in clear", async () => {
    const path = files.path();
    const key = randomBytes(32);
    const store = await openSqliteStore({
      path,
      newId: createIdGenerator(),
      secrets: secretKeyring(key),
    });
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
    const bytes = fileText(path);
    expect(bytes).toContain(task.id);
    expect(bytes).not.toContain("current-secret");
    expect(bytes).not.toContain("retiring-secret");
    await store.close();

    // Rotation: the new key seals, the old one only opens; the restart reseals every task.
    const newKey = randomBytes(32);
    const rotated = await openSqliteStore({
      path,
      newId: createIdGenerator(),
      secrets: secretKeyring(newKey, [key]),
    });
    expect(await rotated.resealSecrets()).toBe(1);
    expect(await rotated.resealSecrets()).toBe(0);
    await rotated.close();
    const after = await openSqliteStore({
      path,
      newId: createIdGenerator(),
      secrets: secretKeyring(newKey),
    });
    expect((await after.tasks.findTask(ALL, task.id))?.webhookSecret).toBe(task.webhookSecret);
    await after.close();

    const keyless = await openSqliteStore({ path, newId: createIdGenerator() });
    await expect(keyless.tasks.findTask(ALL, task.id)).rejects.toThrow(/PUNCTUAL_SECRET_KEY/);
    await keyless.close();
  });
});
