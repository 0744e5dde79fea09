/**
 * `punctual migrate` (docs/operations.md): applies pending schema migrations to a database and reports its status.
 * Serving and working migrate on start too; this command lets an operator do it first, on purpose.
 */
import { Command, CommanderError } from "commander";
import { storeFromDatabaseUrl } from "../composition-stores.js";
import type { Store } from "../domain/ports/store.js";
import { instant } from "../domain/time.js";
import { createIdGenerator } from "../adapters/storage/shared/time-ordered-id.js";
import { databaseUrlOf, poolerSettingsOf, redactUrl, withPoolerOptions } from "./cli-options.js";
import type { PoolerFlags } from "./cli-options.js";

type MigrateOptions = PoolerFlags & {
  database?: string;
  json?: boolean;
  maxConcurrentRuns?: string;
};

export interface MigrateIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const processIo: MigrateIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Migrates the database at `database` (or the default) and prints what is applied. */
export async function runMigrate(options: MigrateOptions, io: MigrateIo): Promise<void> {
  const url = databaseUrlOf(options.database, io.env);
  const usage = (message: string): Error => {
    io.stderr(`punctual migrate: ${message}\n`);
    return new CommanderError(2, "punctual.invalidInput", message);
  };
  const pooler = poolerSettingsOf(options, io.env, usage);
  const requestedBudget = budgetOf(options, io.env, usage);
  let store;
  try {
    // Migrating takes no LISTEN: the pooler mode and the timeouts matter here.
    const settings = { ...pooler };
    delete settings.listenUrl;
    store = await storeFromDatabaseUrl(url, settings).open({
      newId: createIdGenerator(),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`punctual migrate: ${redactUrl(url)}: ${message}\n`);
    throw new CommanderError(1, "punctual.migrateFailed", message);
  }
  try {
    const status = await store.migrate();
    const budget = requestedBudget === null ? null : await replaceBudget(store, requestedBudget);
    if (options.json === true) {
      io.stdout(`${JSON.stringify({ database: redactUrl(url), ...status, ...(budget ?? {}) })}\n`);
    } else {
      io.stdout(
        `${redactUrl(url)}: schema ${status.current ? "current" : "not current"}; ` +
          `migrations applied: ${status.applied.join(", ") || "none"}\n`,
      );
      if (budget !== null) {
        io.stdout(
          `global budget (max_concurrent_runs): ${String(budget.max_concurrent_runs)}` +
            ` (was ${budget.previous_max_concurrent_runs === null ? "not set" : String(budget.previous_max_concurrent_runs)})\n`,
        );
      }
    }
  } finally {
    await store.close();
  }
}

/** `--max-concurrent-runs`, else `$PUNCTUAL_MAX_CONCURRENT_RUNS`, else null (the budget is left alone). */
function budgetOf(
  options: MigrateOptions,
  env: MigrateIo["env"],
  usage: (message: string) => Error,
): number | null {
  const text = options.maxConcurrentRuns ?? env.PUNCTUAL_MAX_CONCURRENT_RUNS;
  if (text === undefined || text === "") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw usage(`--max-concurrent-runs must be a positive integer, not "${text}"`);
  }
  return Number(text);
}

/** Stores the fleet's global budget (docs/operations.md#sizing-the-budget); answers it and the previous. */
async function replaceBudget(
  store: Store,
  budget: number,
): Promise<{ max_concurrent_runs: number; previous_max_concurrent_runs: number | null }> {
  const previous = (await store.fleet?.replaceBudget(budget, instant(Date.now()))) ?? null;
  return { max_concurrent_runs: budget, previous_max_concurrent_runs: previous };
}

export function migrateCommand(io: MigrateIo = processIo): Command {
  return withPoolerOptions(new Command("migrate"), false)
    .description("apply pending database migrations (serve and worker also do it at start)")
    .option(
      "--database <url>",
      "a SQLite file path or sqlite: URL, or a postgres:// URL (default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)",
    )
    .option("--json", "print the status as JSON")
    .option(
      "--max-concurrent-runs <n>",
      "store the fleet's global budget, which every replica applies (default from $PUNCTUAL_MAX_CONCURRENT_RUNS; unset: left as stored)",
    )
    .exitOverride()
    .action(async (options: MigrateOptions) => {
      await runMigrate(options, io);
    });
}
