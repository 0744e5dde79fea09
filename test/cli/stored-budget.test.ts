/**
 * One global budget per fleet (docs/operations.md#sizing-the-budget), on SQLite and PostgreSQL: the first
 * replica stores its `--max-concurrent-runs`; a replica started with another value (here a `serve` beside
 * a `worker`) says so and applies the stored one; `punctual migrate --max-concurrent-runs` changes it,
 * and every running replica applies the change at its next sweep. Commands run in-process (their
 * commander definitions, a fake process around each) and are watched through their log lines.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMigrate } from "../../src/cli/migrate-command.js";
import type { ProcessIo } from "../../src/cli/process-io.js";
import { serveCommand } from "../../src/cli/serve-command.js";
import { workerCommand } from "../../src/cli/worker-command.js";
import { waitFor } from "../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const dir = mkdtempSync(join(tmpdir(), "punctual-budget-"));
writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

type Line = Record<string, unknown> & { msg?: string };

interface Running {
  readonly lines: Line[];
  stop(): Promise<void>;
}

/** Starts `command` in-process on `database` with `args`; resolves once it has logged its start. */
async function start(
  command: "serve" | "worker",
  database: string,
  args: readonly string[],
): Promise<Running> {
  const lines: Line[] = [];
  let signal: (s: NodeJS.Signals) => void = () => undefined;
  const io: ProcessIo = {
    env: {},
    cwd: dir,
    stdout: () => undefined,
    stderr: (text) => {
      throw new Error(text);
    },
    logger: (level) =>
      pino(
        { level },
        {
          write: (line: string) => {
            lines.push(JSON.parse(line) as Line);
          },
        },
      ),
    onSignal: (listener) => {
      signal = listener;
      return () => undefined;
    },
    die: () => undefined,
  };
  const common = ["--database", database, "--sweep-period", "200ms", ...args];
  const program =
    command === "worker"
      ? workerCommand(io).parseAsync(["--handlers", "handlers.mjs", ...common], { from: "user" })
      : serveCommand(io).parseAsync(["--port", "0", ...common], { from: "user" });
  const started = command === "worker" ? "punctual worker started" : "punctual serving";
  await waitFor(() => lines.find((l) => l.msg === started), {
    timeoutMs: 20_000,
    what: `${command} to start`,
    describe: () => JSON.stringify(lines),
  });
  return {
    lines,
    stop: async () => {
      signal("SIGTERM");
      await program;
    },
  };
}

function thresholdsOf(running: Running, started: string): Record<string, unknown> {
  const line = running.lines.find((l) => l.msg === started);
  return (line?.thresholds ?? {}) as Record<string, unknown>;
}

async function migrateWithBudget(database: string, budget: string): Promise<string> {
  let out = "";
  await runMigrate(
    { database, maxConcurrentRuns: budget },
    {
      env: {},
      stdout: (text) => (out += text),
      stderr: (text) => {
        throw new Error(text);
      },
    },
  );
  return out;
}

/** The scenario on one database. */
async function oneBudgetPerFleet(database: string): Promise<void> {
  const worker = await start("worker", database, ["--max-concurrent-runs", "4"]);
  let serve: Running | null = null;
  try {
    expect(thresholdsOf(worker, "punctual worker started")).toMatchObject({
      maxConcurrentRuns: 4,
      maxActiveRunsPerOwner: 2,
    });
    serve = await start("serve", database, ["--max-concurrent-runs", "9"]);
    const differs = serve.lines.find((l) =>
      String(l.msg).startsWith("max_concurrent_runs differs from the global budget"),
    );
    expect(differs).toMatchObject({ level: 40, requested: 9, inForce: 4 });
    // The default share is half the budget in force, not of the flag's: one share across the fleet.
    expect(thresholdsOf(serve, "punctual serving")).toMatchObject({
      maxConcurrentRuns: 4,
      maxActiveRunsPerOwner: 2,
    });

    expect(await migrateWithBudget(database, "6")).toContain(
      "global budget (max_concurrent_runs): 6 (was 4)",
    );
    // Each running replica applies it at its next sweep, and logs it.
    for (const replica of [worker, serve]) {
      const changed = await waitFor(
        () => replica.lines.find((l) => l.msg === "the global budget in force changed"),
        { timeoutMs: 10_000, what: "the budget change to be applied" },
      );
      expect(changed).toMatchObject({ from: 4, to: 6, maxActiveRunsPerOwner: 3 });
    }
  } finally {
    await serve?.stop();
    await worker.stop();
  }
  // A replica started later with no flag takes the stored value without a warning.
  const later = await start("worker", database, []);
  await later.stop();
  expect(thresholdsOf(later, "punctual worker started")).toMatchObject({
    maxConcurrentRuns: 6,
    maxActiveRunsPerOwner: 3,
  });
  expect(later.lines.filter((l) => l.level === 40)).toEqual([]);
}

describe("the stored global budget", () => {
  it("is one value a mixed fleet applies, on SQLite", { timeout: 60_000 }, async () => {
    await oneBudgetPerFleet(join(dir, "fleet.db"));
  });

  describe("on PostgreSQL", () => {
    let database: PostgresTestDatabase | null = null;
    beforeAll(async () => {
      if (await raceTestsRunnable("test/cli/stored-budget.test.ts")) {
        database = await createPostgresTestDatabase();
      }
    }, 60_000);
    afterAll(async () => {
      await database?.drop();
    });

    it("is one value a mixed fleet applies, on PostgreSQL", { timeout: 60_000 }, async (ctx) => {
      if (database?.url == null) {
        ctx.skip();
        return;
      }
      await oneBudgetPerFleet(database.url);
    });
  });
});
