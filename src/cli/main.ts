/**
 * The `punctual` command line: builds the commander program and maps failures to exit codes
 * (0 ok, 1 runtime failure, 2 usage or validation error; docs/operations.md).
 */
import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";
import { clientCommands } from "./client-command.js";
import { migrateCommand } from "./migrate-command.js";
import { nextCommand } from "./next-command.js";
import { serveCommand } from "./serve-command.js";
import { tokenCommand } from "./token-command.js";
import { workerCommand } from "./worker-command.js";

/** The package's version (the same relative path from src/ and from dist/). */
export function packageVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)("../../package.json");
  const version = (manifest as { version?: unknown }).version;
  return typeof version === "string" ? version : "unknown";
}

export function buildProgram(): Command {
  const program = new Command("punctual")
    .description("A durable scheduler: cron with time zones, once and interval tasks.")
    .version(packageVersion(), "-V, --version", "print punctual's version")
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      "after",
      `
Example: when does "02:30 every day" fire in New York across the 2024 spring DST change?
  $ punctual next "30 2 * * *" --tz America/New_York --from 2024-03-09T00:00:00Z --count 3`,
    );
  program.addCommand(nextCommand());
  program.addCommand(serveCommand());
  program.addCommand(tokenCommand());
  for (const command of clientCommands()) program.addCommand(command);
  program.addCommand(workerCommand());
  program.addCommand(migrateCommand());
  return program;
}

/** Runs the CLI with `argv` (as `process.argv`) and resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  return runProgram(buildProgram(), argv);
}

/**
 * Runs `program` with `argv` and maps its failures to exit codes: a usage error 2, a command's own
 * `punctual.*` code as it chose, anything else 1 with its message on `stderr`.
 */
export async function runProgram(
  program: Command,
  argv: readonly string[],
  stderr: (text: string) => void = (text) => process.stderr.write(text),
): Promise<number> {
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Our commands choose their exit code (`punctual.*`); commander's own errors are usage errors.
      if (error.code.startsWith("punctual.")) return error.exitCode;
      return error.exitCode === 0 ? 0 : 2;
    }
    stderr(`punctual: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
