/**
 * `punctual migrate` (docs/operations.md): applies pending schema migrations to a database and reports its status.
 * Serving and working migrate on start too; this command lets an operator do it first, on purpose.
 */
import { Command, CommanderError } from "commander";
import { storeFromDatabaseUrl } from "../../composition.js";
import { createIdGenerator } from "../storage/shared/time-ordered-id.js";
import { databaseUrlOf, poolerSettingsOf, redactUrl, withPoolerOptions } from "./cli-options.js";
import type { PoolerFlags } from "./cli-options.js";

type MigrateOptions = PoolerFlags & { database?: string; json?: boolean };

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
  const pooler = poolerSettingsOf(options, io.env, (message) => {
    io.stderr(`punctual migrate: ${message}\n`);
    return new CommanderError(2, "punctual.invalidInput", message);
  });
  let store;
  try {
    // Migrating takes no LISTEN: only the pooler mode matters here.
    const { pooler: mode } = pooler;
    store = await storeFromDatabaseUrl(url, mode === undefined ? {} : { pooler: mode }).open({
      newId: createIdGenerator(),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`punctual migrate: ${redactUrl(url)}: ${message}\n`);
    throw new CommanderError(1, "punctual.migrateFailed", message);
  }
  try {
    const status = await store.migrate();
    if (options.json === true) {
      io.stdout(`${JSON.stringify({ database: redactUrl(url), ...status })}\n`);
    } else {
      io.stdout(
        `${redactUrl(url)}: schema ${status.current ? "current" : "not current"}; ` +
          `migrations applied: ${status.applied.join(", ") || "none"}\n`,
      );
    }
  } finally {
    await store.close();
  }
}

export function migrateCommand(io: MigrateIo = processIo): Command {
  return withPoolerOptions(new Command("migrate"), false)
    .description("apply pending database migrations (serve and worker also do it at start)")
    .option(
      "--database <url>",
      "a SQLite file path or sqlite: URL, or a postgres:// URL (default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)",
    )
    .option("--json", "print the status as JSON")
    .exitOverride()
    .action(async (options: MigrateOptions) => {
      await runMigrate(options, io);
    });
}
