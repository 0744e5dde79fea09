/**
 * `punctual worker --handlers MODULE [--database URL]` (docs/operations.md): runs the coordinator alone, with the
 * handlers a module exports, until SIGTERM or SIGINT. The first signal stops gracefully (no new claims;
 * launches and running handlers get the shutdown timeout) and exits 0; a second one exits at once.
 */
import { Command, CommanderError } from "commander";
import {
  databaseUrlOf,
  loadHandlers,
  poolerSettingsOf,
  redactUrl,
  targetOptionsOf,
  withPoolerOptions,
} from "./cli-options.js";
import type { PoolerFlags } from "./cli-options.js";
import { processIo, runUntilSignal } from "./process-io.js";
import type { ProcessIo } from "./process-io.js";
import { registerHandlers } from "../launchers/handler/handler-definition.js";
import type { HandlersOption } from "../launchers/handler/handler-definition.js";
import { stopDeadlineMs, thresholdsOf, withThresholdOptions } from "./threshold-options.js";
import type { ThresholdFlags } from "./threshold-options.js";

/** The process around the command (injected in tests). */
export type WorkerIo = ProcessIo;

interface WorkerOptions extends PoolerFlags, ThresholdFlags {
  readonly handlers: string;
  readonly database?: string;
  readonly logLevel?: string;
}

/** A usage problem: one line on stderr, exit 2. */
function usage(io: WorkerIo, message: string): CommanderError {
  io.stderr(`punctual worker: ${message}\n`);
  return new CommanderError(2, "punctual.invalidInput", message);
}

/** Runs the worker until the first signal has stopped it gracefully; resolves with the exit code. */
export async function runWorker(options: WorkerOptions, io: WorkerIo): Promise<number> {
  const url = databaseUrlOf(options.database, io.env);
  const thresholds = thresholdsOf(options, io.env, (message) => usage(io, message));
  const pooler = poolerSettingsOf(options, io.env, (message) => usage(io, message));
  let handlers: HandlersOption;
  try {
    handlers = await loadHandlers(options.handlers, io.cwd);
  } catch (error) {
    throw usage(io, error instanceof Error ? error.message : String(error));
  }
  const logger = io.logger(options.logLevel ?? io.env.PUNCTUAL_LOG_LEVEL ?? "info");
  const targets = targetOptionsOf(io.env, (message) => usage(io, message));
  // Loaded only now, after the flags are checked: the least a worker parses before it listens for signals.
  const { createScheduler, storeFromDatabaseUrl } = await import("../../composition.js");
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(url, pooler),
    handlers,
    logger,
    ...targets,
    policy: thresholds.policy,
    coordinator: thresholds.coordinator,
  });
  return runUntilSignal({
    io,
    logger,
    start: () => scheduler.start(),
    started: async () => {
      const rt = await scheduler.runtime();
      logger.info(
        {
          database: redactUrl(url),
          handlers: [...registerHandlers(handlers).keys()],
          replica: rt.coordinator.replicaId,
          thresholds: rt.thresholds,
        },
        "punctual worker started",
      );
    },
    stop: () => scheduler.stop(),
    stopWithinMs: stopDeadlineMs(thresholds),
    stopping:
      "stopping: no new claims; in-flight launches and handlers may finish (signal again to exit now)",
    stopped: "punctual worker stopped",
  });
}

/** The `worker` command. */
export function workerCommand(io: WorkerIo = processIo): Command {
  const command = withPoolerOptions(new Command("worker"))
    .description("run the coordinator with the handlers a module exports, until SIGTERM or SIGINT")
    .requiredOption(
      "--handlers <module>",
      "a module whose default (or `handlers`) export is a { name: handler } map",
    )
    .option(
      "--database <url>",
      "a SQLite file path or sqlite: URL, or a postgres:// URL " +
        "(default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)",
    );
  return withThresholdOptions(command, "worker")
    .option("--log-level <level>", "pino log level (default: $PUNCTUAL_LOG_LEVEL, else info)")
    .exitOverride()
    .action(async (options: WorkerOptions) => {
      const code = await runWorker(options, io);
      if (code !== 0) throw new CommanderError(code, "punctual.worker", "worker failed");
    });
}
