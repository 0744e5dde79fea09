/**
 * The bench's creation client: a refusal of a past instant is reported as an overrun by both creation
 * modes, so a loaded setup is tried once more instead of aborting the bench.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CREATE_MANY_CHUNK, CreationFailed, LibraryClient } from "../../bench/lib/library.js";
import type { CreationMode } from "../../bench/lib/library.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "punctual-bench-client-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function once(runAt: number): unknown {
  return {
    title: "burst",
    schedule: { type: "once", run_at: new Date(runAt).toISOString() },
    target: { kind: "handler", name: "noop" },
  };
}

describe("LibraryClient.create", () => {
  it.each<CreationMode>(["create", "createMany"])(
    "reports %s's refusal of a past instant as an overrun, after the tasks it created",
    async (mode) => {
      const client = new LibraryClient({ kind: "sqlite", path: join(dir, "store.db") });
      try {
        // A first chunk due in the future, then one whose instant has passed.
        const future = Date.now() + 3_600_000;
        const inputs = [
          ...Array.from({ length: CREATE_MANY_CHUNK }, () => once(future)),
          once(Date.now() - 60_000),
        ];
        const error = await client.create(inputs, mode).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(CreationFailed);
        const failed = error as CreationFailed;
        expect(failed.overran).toBe(true);
        if (mode === "createMany") expect(failed.created).toBe(CREATE_MANY_CHUNK);
      } finally {
        await client.close();
      }
    },
  );
});
