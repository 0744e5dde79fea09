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
import { parseDuration } from "../../domain/schedule/iso-text.js";
import { registerHandlers } from "../launchers/handler/handler-definition.js";
import type { HandlersOption } from "../launchers/handler/handler-definition.js";
import { createScheduler, storeFromDatabaseUrl } from "../../composition.js";

/** The process around the command (injected in tests). */
export type WorkerIo = ProcessIo;

interface WorkerOptions extends PoolerFlags {
  readonly handlers: string;
  readonly database?: string;
  readonly maxConcurrentRuns?: string;
  readonly leaseSeconds?: string;
  readonly retention?: string;
  readonly logLevel?: string;
}

/** A usage problem: one line on stderr, exit 2. */
function usage(io: WorkerIo, message: string): CommanderError {
  io.stderr(`punctual worker: ${message}\n`);
  return new CommanderError(2, "punctual.invalidInput", message);
}

function parseBudget(io: WorkerIo, text: string | undefined): number | undefined {
  const value = text ?? io.env.PUNCTUAL_MAX_CONCURRENT_RUNS;
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw usage(io, `--max-concurrent-runs must be a positive integer, not "${value}"`);
  }
  return Number(value);
}

/** `--lease-seconds` / `PUNCTUAL_LEASE_SECONDS`: a launch claim's lease and a replica's silence limit. */
function parseLease(io: WorkerIo, text: string | undefined): number | undefined {
  const value = text ?? io.env.PUNCTUAL_LEASE_SECONDS;
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 2) {
    throw usage(io, `--lease-seconds must be an integer of at least 2, not "${value}"`);
  }
  return Number(value);
}

/** `--retention` / `PUNCTUAL_RETENTION` (an ISO-8601 duration or seconds) in ms; default 30 days. */
function parseRetention(io: WorkerIo, text: string | undefined): number | undefined {
  const value = text ?? io.env.PUNCTUAL_RETENTION;
  if (value === undefined || value === "") return undefined;
  const parsed = parseDuration(value, 1000);
  if (!parsed.ok) throw usage(io, `--retention: ${parsed.problem}`);
  return parsed.value;
}

/** Runs the worker until the first signal has stopped it gracefully; resolves with the exit code. */
export async function runWorker(options: WorkerOptions, io: WorkerIo): Promise<number> {
  const url = databaseUrlOf(options.database, io.env);
  const maxConcurrentRuns = parseBudget(io, options.maxConcurrentRuns);
  const leaseSeconds = parseLease(io, options.leaseSeconds);
  const retentionMs = parseRetention(io, options.retention);
  const pooler = poolerSettingsOf(options, io.env, (message) => usage(io, message));
  let handlers: HandlersOption;
  try {
    handlers = await loadHandlers(options.handlers, io.cwd);
  } catch (error) {
    throw usage(io, error instanceof Error ? error.message : String(error));
  }
  const logger = io.logger(options.logLevel ?? io.env.PUNCTUAL_LOG_LEVEL ?? "info");
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(url, pooler),
    handlers,
    logger,
    ...targetOptionsOf(io.env, (message) => usage(io, message)),
    policy: {
      ...(maxConcurrentRuns === undefined ? {} : { maxConcurrentRuns }),
      ...(leaseSeconds === undefined ? {} : { leaseSeconds }),
    },
    ...(retentionMs === undefined ? {} : { coordinator: { retentionMs } }),
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
        },
        "punctual worker started",
      );
    },
    stop: () => scheduler.stop(),
    stopping:
      "stopping: no new claims; in-flight launches and handlers may finish (signal again to exit now)",
    stopped: "punctual worker stopped",
  });
}

/** The `worker` command. */
export function workerCommand(io: WorkerIo = processIo): Command {
  return withPoolerOptions(new Command("worker"))
    .description("run the coordinator with the handlers a module exports, until SIGTERM or SIGINT")
    .requiredOption(
      "--handlers <module>",
      "a module whose default (or `handlers`) export is a { name: handler } map",
    )
    .option(
      "--database <url>",
      "a SQLite file path or sqlite: URL, or a postgres:// URL " +
        "(default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)",
    )
    .option(
      "--max-concurrent-runs <n>",
      "runs launching or running across all replicas at most (default: $PUNCTUAL_MAX_CONCURRENT_RUNS, else 16)",
    )
    .option(
      "--lease-seconds <n>",
      "a launch claim's lease, and how long a silent replica keeps its handler runs " +
        "(default: $PUNCTUAL_LEASE_SECONDS, else 60)",
    )
    .option(
      "--retention <duration>",
      "delete finished runs older than this (default: $PUNCTUAL_RETENTION, else P30D)",
    )
    .option("--log-level <level>", "pino log level (default: $PUNCTUAL_LOG_LEVEL, else info)")
    .exitOverride()
    .action(async (options: WorkerOptions) => {
      const code = await runWorker(options, io);
      if (code !== 0) throw new CommanderError(code, "punctual.worker", "worker failed");
    });
}
