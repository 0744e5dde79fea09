/**
 * The operator key's keyring (docs/security.md#secrets-at-rest): AES-256-GCM under the current key, the
 * key id kept with each value so older keys still open theirs while a rotation is under way.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CLEAR_SECRETS,
  isSealed,
  parseSecretKey,
  resealed,
  secretKeyring,
  secretSealerFromEnv,
} from "../../../../src/adapters/storage/shared/secret-keyring.js";

const oldKey = randomBytes(32);
const newKey = randomBytes(32);

describe("secretKeyring", () => {
  it("seals a secret so its text is nowhere in the stored value, and opens it again", () => {
    const keyring = secretKeyring(newKey);
    const stored = keyring.seal("s3cr3t-signing-key");
    expect(isSealed(stored)).toBe(true);
    expect(stored).not.toContain("s3cr3t");
    expect(keyring.seal("s3cr3t-signing-key")).not.toBe(stored);
    expect(keyring.open(stored)).toBe("s3cr3t-signing-key");
    expect(keyring.isCurrent(stored)).toBe(true);
  });

  it("opens what an older key sealed and reseals it under the current key", () => {
    const before = secretKeyring(oldKey).seal("kept");
    const rotating = secretKeyring(newKey, [oldKey]);
    expect(rotating.open(before)).toBe("kept");
    expect(rotating.isCurrent(before)).toBe(false);
    const [row] = resealed([{ id: "t1", webhook_secret: before, retiring_secret: null }], rotating);
    expect(row?.webhook_secret).not.toBe(before);
    expect(secretKeyring(newKey).open(row?.webhook_secret ?? "")).toBe("kept");
  });

  it("refuses a value sealed under a key it does not hold, naming the key id", () => {
    const stored = secretKeyring(oldKey).seal("x");
    expect(() => secretKeyring(newKey).open(stored)).toThrow(/sealed under key [0-9a-f]{16}/);
    expect(() => CLEAR_SECRETS.open(stored)).toThrow(/PUNCTUAL_SECRET_KEY/);
  });

  it("refuses a tampered value (GCM's tag)", () => {
    const keyring = secretKeyring(newKey);
    const stored = keyring.seal("untouched");
    const tampered = `${stored.slice(0, -2)}${stored.endsWith("AA") ? "BB" : "AA"}`;
    expect(() => keyring.open(tampered)).toThrow();
  });

  it("turns sealing off with only previous keys: resealing writes secrets in clear", () => {
    const stored = secretKeyring(oldKey).seal("plain again");
    const [row] = resealed(
      [{ id: "t1", webhook_secret: stored, retiring_secret: null }],
      secretKeyring(null, [oldKey]),
    );
    expect(row?.webhook_secret).toBe("plain again");
    expect(
      resealed([{ id: "t2", webhook_secret: "clear", retiring_secret: null }], CLEAR_SECRETS),
    ).toEqual([]);
  });
});

describe("secretSealerFromEnv", () => {
  it("reads PUNCTUAL_SECRET_KEY in base64 or hex, and the previous keys comma-separated", () => {
    const sealer = secretSealerFromEnv({
      PUNCTUAL_SECRET_KEY: newKey.toString("base64"),
      PUNCTUAL_SECRET_KEY_PREVIOUS: `${oldKey.toString("hex")}, `,
    });
    expect(sealer.open(secretKeyring(oldKey).seal("a"))).toBe("a");
    expect(secretKeyring(newKey).open(sealer.seal("b"))).toBe("b");
    expect(secretSealerFromEnv({})).toBe(CLEAR_SECRETS);
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => parseSecretKey("c2hvcnQ=")).toThrow(/32 bytes/);
  });
});
