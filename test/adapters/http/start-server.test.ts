/**
 * `startServer`, `punctual serve`'s start (docs/operations.md#starting-replicas), in process on a memory
 * store: the coordinator's first claim round ends before the HTTP stack is built, then the server
 * listens; a stop asked as soon as the store is open means the coordinator never starts, nothing is
 * claimed, and the start rejects without listening.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createScheduler } from "../../../src/composition.js";
import { storeFromDatabaseUrl } from "../../../src/composition-stores.js";
import { memoryStore } from "../../../src/adapters/storage/memory/memory-store.js";
import { startServer } from "../../../src/composition-server.js";
import type { ServerOptions } from "../../../src/composition-server.js";

/** Resolves once the wall clock has passed `at` (the task's due instant): a condition, not a sleep. */
async function waitUntil(at: number): Promise<void> {
  while (Date.now() <= at) await new Promise((resolve) => setTimeout(resolve, 20));
}

const options = (): ServerOptions => ({
  store: memoryStore(),
  rateLimit: false,
  host: "127.0.0.1",
  port: 0,
  handlers: { slow: () => Promise.resolve() },
});

describe("startServer", () => {
  it("claims first, then listens", async () => {
    let stop: (() => Promise<void>) | null = null;
    const { server, baseUrl } = await startServer(options(), (given) => (stop = given));
    try {
      expect(stop).not.toBeNull();
      const health = await fetch(`${baseUrl}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it("never starts its coordinator when stopped as soon as the store is open", async () => {
    const dir = mkdtempSync(join(tmpdir(), "punctual-start-server-"));
    const database = join(dir, "punctual.db");
    try {
      // A task due before the start, as a restarted replica's backlog is: any claim round admits it.
      const setup = createScheduler({
        store: storeFromDatabaseUrl(database),
        handlers: { slow: () => Promise.resolve() },
      });
      const { task } = await setup.tasks.create({
        title: "due",
        schedule: { type: "once", run_at: new Date(Date.now() + 1_000).toISOString() },
        target: { kind: "handler", name: "slow" },
      });
      await setup.stop();
      await waitUntil(Date.now() + 1_100);
      const started = startServer(
        { ...options(), store: storeFromDatabaseUrl(database) },
        (stop) => void stop(),
      );
      await expect(started).rejects.toThrow(/stopped while starting/);
      const reader = createScheduler({ store: storeFromDatabaseUrl(database) });
      try {
        expect((await reader.tasks.runs(task.id)).items).toEqual([]);
      } finally {
        await reader.stop();
      }
      // A coordinator that started would have beaten at least once: no replica ever beat here.
      const db = new Database(database, { readonly: true });
      try {
        expect(db.prepare("SELECT count(*) AS n FROM replicas").get()).toEqual({ n: 0 });
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops without listening when asked while the first claim round runs", async () => {
    let stopStart: (() => Promise<void>) | null = null;
    const started = startServer(options(), (stop) => (stopStart = stop));
    // The stop arrives once the start awaits its coordinator (the first await after the store opened).
    await new Promise((resolve) => setImmediate(resolve));
    const stopping = stopStart!();
    await expect(started).rejects.toThrow(/stopped while starting/);
    await stopping;
  });
});
