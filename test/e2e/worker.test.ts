/**
 * `punctual worker` end to end (issue 5 acceptance): the built CLI runs as a process with a handlers
 * module, against a SQLite file and against PostgreSQL; tasks are created through the library from this
 * process on the same database; the handlers' log and the run ledger show a once task and an interval
 * task firing, each occurrence once; SIGTERM stops it with exit code 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/composition.js";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { StoreFactory } from "../../src/domain/ports/store.js";
import type { RunView } from "../../src/application/shapes/view-mappers.js";
import { createPostgresTestDatabase, postgresServerReachable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { ensureBuilt } from "./build.js";
import { startCli, stopCli, waitFor, waitForOutput } from "./process.js";

const HANDLERS = `
import { appendFileSync } from "node:fs";
const out = process.env.PUNCTUAL_E2E_OUT;
export default {
  record: ({ task, run }) => {
    appendFileSync(out, JSON.stringify({ task: task.title, scheduled_for: run.scheduled_for }) + "\\n");
    return { recorded: true };
  },
  block: ({ task, run }) => {
    appendFileSync(out, JSON.stringify({ task: task.title, scheduled_for: run.scheduled_for }) + "\\n");
    return new Promise(() => undefined);
  },
};
`;

function wholeSecondIn(ms: number): string {
  return new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString();
}

/** The handler names the worker has, so this process may create tasks naming them (it runs none). */
const NO_HANDLERS = { record: () => undefined, block: () => undefined };

interface Fired {
  readonly task: string;
  readonly scheduled_for: string;
}

function readFired(file: string): Fired[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Fired);
}

/** Every run of a task, read through the library (the same code path a user has). */
async function ledger(store: StoreFactory, taskId: string): Promise<readonly RunView[]> {
  const reader = createScheduler({ store, handlers: NO_HANDLERS });
  try {
    return (await reader.tasks.runs(taskId, { limit: 200 })).items;
  } finally {
    await reader.stop();
  }
}

interface Backend {
  readonly name: string;
  readonly store: StoreFactory;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

let dir = "";
let database: PostgresTestDatabase | null = null;
const serverReachable = await postgresServerReachable();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "punctual-e2e-"));
  writeFileSync(join(dir, "handlers.mjs"), HANDLERS);
  await ensureBuilt();
}, 240_000);

afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function backend(name: string): Promise<Backend> {
  if (name === "sqlite") {
    const file = join(dir, `punctual-${Date.now()}.db`);
    // The database comes from the environment here, and from --database for PostgreSQL.
    return { name, store: sqlite(file), args: [], env: { PUNCTUAL_DATABASE_URL: file } };
  }
  database ??= await createPostgresTestDatabase();
  const url = database.url ?? "";
  return { name, store: postgres(url), args: ["--database", url], env: {} };
}

describe("punctual worker", () => {
  for (const name of ["sqlite", "postgres"]) {
    const runnable = name === "sqlite" || serverReachable;
    it.runIf(runnable)(
      `fires a once task and an interval task on ${name}, then stops cleanly on SIGTERM`,
      { timeout: 90_000 },
      async () => {
        const db = await backend(name);
        const out = join(dir, `fired-${name}.jsonl`);
        const worker = startCli(["worker", "--handlers", "./handlers.mjs", ...db.args], {
          cwd: dir,
          env: { ...db.env, PUNCTUAL_E2E_OUT: out },
        });
        try {
          await waitForOutput(worker, "punctual worker started");
          const client = createScheduler({
            store: db.store,
            handlers: NO_HANDLERS,
          });
          const runAt = wholeSecondIn(2000);
          const once = await client.tasks.create({
            title: "once",
            // Whole seconds only (schedules are second-precise), about 2 s ahead.
            schedule: { type: "once", run_at: runAt },
            target: { kind: "handler", name: "record" },
          });
          const every = await client.tasks.create({
            title: "every second",
            schedule: { type: "interval", every: "PT1S" },
            target: { kind: "handler", name: "record" },
          });
          await client.stop();

          const fired = await waitFor(
            () => {
              const lines = readFired(out);
              const intervals = lines.filter((f) => f.task === "every second").length;
              return lines.some((f) => f.task === "once") && intervals >= 3 ? lines : undefined;
            },
            { timeoutMs: 30_000, what: "both tasks to fire", describe: worker.output },
          );
          expect(fired.filter((f) => f.task === "once")).toEqual([
            { task: "once", scheduled_for: runAt.replace(".000Z", "Z") },
          ]);

          const exit = await stopCli(worker, "SIGTERM");
          expect(exit, worker.output()).toEqual({ code: 0, signal: null });
          expect(worker.output()).toContain("punctual worker stopped");

          // Each occurrence fired once, and the ledger agrees with what the handler saw.
          const all = readFired(out);
          const keys = all.map((f) => `${f.task}@${f.scheduled_for}`);
          expect(new Set(keys).size).toBe(keys.length);
          const onceRuns = await ledger(db.store, once.task.id);
          expect(onceRuns.map((r) => r.status)).toEqual(["succeeded"]);
          const everyRuns = await ledger(db.store, every.task.id);
          const succeeded = everyRuns.filter((r) => r.status === "succeeded");
          expect(succeeded.map((r) => r.scheduled_for).sort()).toEqual(
            all
              .filter((f) => f.task === "every second")
              .map((f) => f.scheduled_for)
              .sort(),
          );
          expect(
            everyRuns.filter((r) => r.status === "running" || r.status === "launching"),
          ).toEqual([]);
        } finally {
          if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
        }
      },
    );
  }

  it(
    "exits at once on a second signal while a handler holds up the graceful stop",
    { timeout: 60_000 },
    async () => {
      const db = await backend("sqlite");
      const out = join(dir, "fired-block.jsonl");
      const worker = startCli(["worker", "--handlers", "./handlers.mjs"], {
        cwd: dir,
        env: { ...db.env, PUNCTUAL_E2E_OUT: out },
      });
      try {
        await waitForOutput(worker, "punctual worker started");
        const client = createScheduler({ store: db.store, handlers: NO_HANDLERS });
        await client.tasks.create({
          title: "stuck",
          schedule: { type: "once", run_at: wholeSecondIn(1000) },
          target: { kind: "handler", name: "block" },
        });
        await client.stop();
        await waitFor(() => (readFired(out).length > 0 ? true : undefined), {
          timeoutMs: 30_000,
          what: "the blocking handler to start",
          describe: worker.output,
        });
        worker.child.kill("SIGTERM");
        await waitForOutput(worker, "stopping:", 10_000);
        // The handler never ends: the graceful stop would wait for the shutdown timeout; a second
        // signal ends the process at once, killed by that signal.
        const exit = await stopCli(worker, "SIGTERM", 5000);
        expect(exit, worker.output()).toEqual({ code: null, signal: "SIGTERM" });
        expect(worker.output()).not.toContain("punctual worker stopped");
      } finally {
        if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      }
    },
  );
});
