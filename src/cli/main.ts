/**
 * The `punctual` command line: builds the commander program and maps failures to exit codes
 * (0 ok, 1 runtime failure, 2 usage or validation error; docs/operations.md).
 */
import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";

/** The package's version (the same relative path from src/ and from dist/). */
export function packageVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)("../../package.json");
  const version = (manifest as { version?: unknown }).version;
  return typeof version === "string" ? version : "unknown";
}

/**
 * The commands of the program that runs `command`: a replica (`serve`, `worker`) loads its own command's
 * module only, not the client, `apply` or the other commands (docs/benchmarks.md#start-cost: each
 * module a start parses is CPU a crash-looping replica spends before its first claim); anything else
 * loads them all, for the help and the suggestions of a mistyped name.
 */
async function commandsFor(command: string | undefined): Promise<Command[]> {
  if (command === "worker") return [(await import("./worker-command.js")).workerCommand()];
  if (command === "serve") return [(await import("./serve-command.js")).serveCommand()];
  const [next, serve, token, client, worker, migrate] = await Promise.all([
    import("./next-command.js"),
    import("./serve-command.js"),
    import("./token-command.js"),
    import("./client-command.js"),
    import("./worker-command.js"),
    import("./migrate-command.js"),
  ]);
  return [
    next.nextCommand(),
    serve.serveCommand(),
    token.tokenCommand(),
    ...client.clientCommands(),
    worker.workerCommand(),
    migrate.migrateCommand(),
  ];
}

/** The program, with the commands `command` (the first argument) needs; all of them when absent. */
export async function buildProgram(command?: string): Promise<Command> {
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
  for (const each of await commandsFor(command)) program.addCommand(each);
  return program;
}

/** Runs the CLI with `argv` (as `process.argv`) and resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  return runProgram(await buildProgram(argv[2]), argv);
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
