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
import { registerHandlers } from "../adapters/launchers/handler/handler-definition.js";
import type { HandlersOption } from "../adapters/launchers/handler/handler-definition.js";
import { stopDeadlineMs, thresholdsOf, withThresholdOptions } from "./threshold-options.js";
import type { ThresholdFlags } from "./threshold-options.js";
import type { ProbeServer } from "../adapters/metrics/probe-server.js";
import { notReadyReason } from "../application/dispatch/readiness.js";

/** The process around the command (injected in tests). */
export type WorkerIo = ProcessIo;

interface WorkerOptions extends PoolerFlags, ThresholdFlags {
  readonly handlers: string;
  readonly database?: string;
  readonly logLevel?: string;
  readonly metricsPort?: string;
  readonly metricsHost?: string;
}

/** Where `--metrics-port` listens, or null when no probe listener is wanted. */
function probeAddressOf(
  options: WorkerOptions,
  io: WorkerIo,
): { readonly port: number; readonly host: string } | null {
  const portText = options.metricsPort ?? io.env["PUNCTUAL_METRICS_PORT"];
  if (portText === undefined || portText === "") return null;
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw usage(io, `--metrics-port must be a port number, not "${portText}"`);
  }
  return {
    port: Number(portText),
    host: options.metricsHost ?? io.env["PUNCTUAL_METRICS_HOST"] ?? "127.0.0.1",
  };
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
  const probeAddress = probeAddressOf(options, io);
  let handlers: HandlersOption;
  try {
    handlers = await loadHandlers(options.handlers, io.cwd);
  } catch (error) {
    throw usage(io, error instanceof Error ? error.message : String(error));
  }
  const logger = io.logger(options.logLevel ?? io.env.PUNCTUAL_LOG_LEVEL ?? "info");
  const targets = targetOptionsOf(io.env, (message) => usage(io, message));
  // Loaded only now, after the flags are checked: the least a worker parses before it listens for signals.
  const [{ createScheduler }, { storeFromDatabaseUrl }] = await Promise.all([
    import("../composition.js"),
    import("../composition-stores.js"),
  ]);
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(url, pooler),
    handlers,
    logger,
    ...targets,
    policy: thresholds.policy,
    coordinator: thresholds.coordinator,
  });
  const state = { started: false, stopping: false };
  let probes: ProbeServer | null = null;
  /** Whether the store has opened: until then nothing runs that a stop would drain. */
  let opened = false;
  return runUntilSignal({
    io,
    logger,
    start: async () => {
      scheduler.runtime().then(
        () => (opened = true),
        () => undefined,
      );
      await scheduler.start();
      if (probeAddress === null) return;
      // Loaded only when asked for: a worker without --metrics-port never parses prom-client.
      const [metrics, rt, { createProbeServer }] = await Promise.all([
        scheduler.metrics(),
        scheduler.runtime(),
        import("../adapters/metrics/probe-server.js"),
      ]);
      probes = createProbeServer({ metrics, notReady: () => notReadyReason(rt.store, state) });
      const at = await probes.listen(probeAddress.port, probeAddress.host);
      logger.info({ url: at }, "metrics and probes listening (/metrics, /healthz, /readyz)");
    },
    started: async () => {
      state.started = true;
      const rt = await scheduler.runtime();
      logger.info(
        {
          database: redactUrl(url),
          handlers: [...new Set(["log", ...registerHandlers(handlers).keys()])],
          replica: rt.coordinator.replicaId,
          thresholds: rt.thresholds,
        },
        "punctual worker started",
      );
    },
    stop: async () => {
      // `/readyz` says 503 from the first moment of the drain; the listener closes once it is done.
      state.stopping = true;
      if (!opened) {
        // Still opening its store (a connection that hangs, a migration lock held elsewhere): nothing
        // was claimed, so nothing drains. The stop is asked (the coordinator will not start) but not
        // waited for; the exit drops the connection, and a migration waiting on its lock rolls back
        // (docs/operations.md#what-happens-on-shutdown).
        scheduler.stop().catch(() => undefined);
        return;
      }
      try {
        await scheduler.stop();
      } finally {
        await probes?.close();
      }
    },
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
    .option(
      "--metrics-port <n>",
      "serve /metrics, /healthz and /readyz on this port (default: $PUNCTUAL_METRICS_PORT, else none; 0 picks a free one)",
    )
    .option(
      "--metrics-host <host>",
      "interface of the metrics port (default: $PUNCTUAL_METRICS_HOST, else 127.0.0.1)",
    )
    .exitOverride()
    .action(async (options: WorkerOptions) => {
      const code = await runWorker(options, io);
      if (code !== 0) throw new CommanderError(code, "punctual.worker", "worker failed");
    });
}
