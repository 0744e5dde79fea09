/**
 * A worker orphaned the way a killed test runner left two (issue 33): its database dropped under it, and
 * its stdout either a pipe nobody reads any more (the parent stuck, or gone while another process still
 * holds the read end) or a pipe closed under it. The first SIGTERM still ends it within the shutdown
 * deadline (docs/operations.md#what-happens-on-shutdown). Before the fix, the unread pipe kept it alive
 * for as long as nobody read: pino's destination flushed synchronously at exit, retrying on a full pipe.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/composition.js";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { createPostgresTestDatabase, postgresServerReachable } from "../helpers/postgres.js";
import { ensureBuilt, ROOT } from "./build.js";
import { waitFor } from "./process.js";

const serverReachable = await postgresServerReachable();

/** `--shutdown-grace`: the deadline is this plus 5 s, and the log's last lines get 1 s more. */
const GRACE_S = 2;
/** Longer than grace + 5 s + 1 s, far shorter than "for as long as nobody reads". */
const EXIT_BOUND_MS = 20_000;
/** Each run of the task logs its input: a few runs fill any pipe's buffer. */
const INPUT_CHARS = 150_000;

interface Orphan {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];

/** Starts a worker on `url` whose output pipes the test holds but does not read. */
function startWorker(dir: string, url: string): Orphan {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "bin", "punctual.js"),
      "worker",
      "--handlers",
      "handlers.mjs",
      "--database",
      url,
      "--shutdown-grace",
      `${String(GRACE_S)}s`,
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      resolve({ code, signal });
    });
  });
  return { child, stderr: () => stderr, exited };
}

/** Sends SIGTERM once and waits, bounded, for the process to end. */
async function exitAfterOneSigterm(orphan: Orphan): Promise<{ ms: number; code: number | null }> {
  const sentAt = Date.now();
  orphan.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new Error(
          `the worker did not exit within ${String(EXIT_BOUND_MS)} ms of one SIGTERM:\n${orphan.stderr()}`,
        ),
      );
    }, EXIT_BOUND_MS);
  });
  try {
    const exit = await Promise.race([orphan.exited, late]);
    expect(exit.signal).toBeNull();
    return { ms: Date.now() - sentAt, code: exit.code };
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!serverReachable)("an orphaned worker (database dropped, output pipe dead)", () => {
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-orphan-"));
    writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
    await ensureBuilt();
  }, 240_000);

  afterEach(() => {
    // A worker that outlived its bound is killed, so that the failure does not leave an orphan itself.
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ["a pipe nobody reads", false],
    ["a pipe closed under it", true],
  ])(
    "ends on the first SIGTERM with its stdout %s",
    { timeout: 120_000 },
    async (_what, closePipes) => {
      const database = await createPostgresTestDatabase();
      const url = database.url ?? "";
      try {
        const client = createScheduler({ store: postgres(url) });
        const { task } = await client.tasks.create({
          title: "loud",
          schedule: { type: "interval", every: "PT1S" },
          target: { kind: "handler", name: "log", input: { text: "x".repeat(INPUT_CHARS) } },
        });
        await client.stop();

        const orphan = startWorker(dir, url);
        // Five runs logged 750 KB: more than a pipe or socket buffer holds once the reading stops.
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          await waitFor(
            async () => {
              const { rows } = await admin.query<{ n: string }>(
                "SELECT count(*) AS n FROM punctual.runs WHERE task_id = $1 AND launched_at IS NOT NULL",
                [task.id],
              );
              return Number(rows[0]?.n ?? 0) >= 5 ? true : undefined;
            },
            { timeoutMs: 60_000, what: "five runs to be logged", describe: orphan.stderr },
          );
        } finally {
          await admin.end();
        }
        if (closePipes) {
          orphan.child.stdout?.destroy();
          orphan.child.stderr?.destroy();
        }
        await database.drop();

        const { ms } = await exitAfterOneSigterm(orphan);
        // grace + 5 s for the stop, 1 s for the log: the documented bound, with room for a loaded host.
        expect(ms).toBeLessThan((GRACE_S + 5 + 1) * 1000 + 5000);
      } finally {
        await database.drop().catch(() => undefined);
      }
    },
  );
});
