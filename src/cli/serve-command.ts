/**
 * `punctual serve` (docs/operations.md): the HTTP API and, unless `--no-coordinator`, the coordinator in the same
 * process, with the built-in `log` handler plus those of `--handlers MODULE`. With `--init-token` (what
 * `npm start` passes) a database without any token gets an admin token, printed once with a working curl.
 * `--deerflow-api SERVER` also mounts DeerFlow's scheduled-task routes over that DeerFlow server;
 * `--langgraph-api SERVER` (repeatable) LangGraph's crons API under `/langgraph/SERVER`.
 * SIGTERM or SIGINT stops gracefully (docs/operations.md#what-happens-on-shutdown): `/readyz` 503 at
 * once, every other route answering until the coordinator has drained, then the listener closed; a
 * second signal exits at once.
 */
import { Command, CommanderError } from "commander";
import { processIo, runUntilSignal } from "./process-io.js";
import type { ProcessIo } from "./process-io.js";
import { ValidationError } from "../domain/errors.js";
import type { AuthProxyOptions } from "../adapters/http/auth-proxy.js";
import type { Instant } from "../domain/time.js";
import {
  deerflowApiTarget,
  langGraphApiTarget,
} from "../adapters/launchers/agent/agent-servers.js";
import { registerHandlers } from "../adapters/launchers/handler/handler-definition.js";
import type { HandlersOption } from "../adapters/launchers/handler/handler-definition.js";
import {
  databaseUrlOf,
  loadHandlers,
  poolerSettingsOf,
  redactUrl,
  targetOptionsOf,
  withPoolerOptions,
} from "./cli-options.js";
import type { PoolerFlags } from "./cli-options.js";
import { stopDeadlineMs, thresholdsOf, withThresholdOptions } from "./threshold-options.js";
import { portRefusal } from "./port-check.js";
import type { ThresholdFlags } from "./threshold-options.js";

/** The process around the command (injected in tests). */
export type ServeIo = ProcessIo;

interface ServeOptions extends PoolerFlags, ThresholdFlags {
  readonly database?: string;
  readonly port?: string;
  readonly host?: string;
  readonly handlers?: string;
  readonly handlerNames?: string;
  readonly coordinator: boolean;
  readonly initToken?: boolean;
  readonly logLevel?: string;
  readonly deerflowApi?: string;
  readonly langgraphApi?: string[];
  readonly langgraphProxy?: boolean;
  readonly authProxyHeader?: string;
  readonly authProxySecretHeader?: string;
  readonly authProxyFrom?: string[];
}

/**
 * `--auth-proxy-*` as the server's option (docs/security.md#auth-proxy); undefined when off. The HTTP
 * adapter's check is loaded only when the flag is given: a worker shares this program and loads no HTTP
 * module (docs/operations.md#on-a-loaded-host).
 */
async function authProxyOf(
  options: ServeOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<AuthProxyOptions | undefined> {
  const {
    authProxyHeader: header,
    authProxySecretHeader: secretName,
    authProxyFrom: from,
  } = options;
  if (header === undefined) {
    if (secretName !== undefined || from !== undefined) {
      throw new Error("--auth-proxy-secret-header and --auth-proxy-from need --auth-proxy-header");
    }
    return undefined;
  }
  const secret = env["PUNCTUAL_AUTH_PROXY_SECRET"];
  if (secretName !== undefined && (secret === undefined || secret === "")) {
    throw new Error("--auth-proxy-secret-header needs the secret in $PUNCTUAL_AUTH_PROXY_SECRET");
  }
  const { checkedAuthProxy } = await import("../adapters/http/auth-proxy.js");
  return checkedAuthProxy({
    header,
    ...(secretName === undefined || secret === undefined
      ? {}
      : { secretHeader: { name: secretName, secret } }),
    ...(from === undefined ? {} : { from }),
  });
}

/** `a, b,c` as names; blanks dropped. */
function handlerNamesOf(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

function usage(io: ServeIo, message: string): CommanderError {
  io.stderr(`punctual serve: ${message}\n`);
  return new CommanderError(2, "punctual.invalidInput", message);
}

/** The first-run message: the token, once, and a curl that creates a task firing every minute. */
export function firstRunMessage(baseUrl: string, secret: string): string {
  const body = JSON.stringify({
    title: "hello from punctual",
    schedule: { type: "cron", cron: "* * * * *" },
    target: { kind: "handler", name: "log", input: { hello: "world" } },
  });
  return [
    "",
    "First run: an admin token was created. It is shown only this once; keep it:",
    "",
    `  export PUNCTUAL_TOKEN=${secret}`,
    "",
    "Create a task that fires every minute on the built-in `log` handler:",
    "",
    `  curl -sS -X POST ${baseUrl}/v1/tasks \\`,
    `    -H "Authorization: Bearer ${secret}" \\`,
    `    -H "Content-Type: application/json" \\`,
    `    -d '${body}'`,
    "",
    `Dashboard: ${baseUrl}/ (paste the token when it asks)`,
    `API docs: ${baseUrl}/docs`,
    "",
  ].join("\n");
}

/** Serves until the first signal has stopped the server; resolves with the exit code. */
export async function runServe(options: ServeOptions, io: ServeIo): Promise<number> {
  const url = databaseUrlOf(options.database, io.env);
  const portText = options.port ?? io.env["PUNCTUAL_PORT"] ?? "8080";
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw usage(io, `--port must be a port number, not "${portText}"`);
  }
  const host = options.host ?? io.env["PUNCTUAL_HOST"] ?? "127.0.0.1";
  const thresholds = thresholdsOf(options, io.env, (message) => usage(io, message));
  let handlers: HandlersOption = {};
  if (options.handlers !== undefined) {
    try {
      handlers = await loadHandlers(options.handlers, io.cwd);
    } catch (error) {
      throw usage(io, error instanceof Error ? error.message : String(error));
    }
  }
  const logger = io.logger(options.logLevel ?? io.env["PUNCTUAL_LOG_LEVEL"] ?? "info");
  const targets = targetOptionsOf(io.env, (message) => usage(io, message));
  const pooler = poolerSettingsOf(options, io.env, (message) => usage(io, message));
  try {
    if (options.deerflowApi !== undefined) {
      deerflowApiTarget(options.deerflowApi, targets.agentServers);
    }
    for (const name of options.langgraphApi ?? []) {
      langGraphApiTarget(name, targets.agentServers);
    }
  } catch (error) {
    throw usage(
      io,
      error instanceof ValidationError
        ? (error.errors[0]?.message ?? error.message)
        : String(error),
    );
  }
  if (options.langgraphProxy === true && (options.langgraphApi ?? []).length === 0) {
    throw usage(io, "--langgraph-proxy needs --langgraph-api SERVER");
  }
  let authProxy: AuthProxyOptions | undefined;
  try {
    authProxy = await authProxyOf(options, io.env);
  } catch (error) {
    throw usage(io, error instanceof Error ? error.message : String(error));
  }
  const refusal = await portRefusal(host, Number(portText));
  if (refusal !== null) {
    const message = `cannot listen on ${host}:${portText} (${refusal}): is another process using it?`;
    io.stderr(`punctual serve: ${message}\n`);
    throw new CommanderError(1, "punctual.portInUse", message);
  }
  const [{ startServer }, { storeFromDatabaseUrl }] = await Promise.all([
    import("../composition-server.js"),
    import("../composition-stores.js"),
  ]);
  /**
   * The stop from the moment the store has opened (startServer): a signal while it opens (a first
   * connection that hangs, migrations waiting for the lock another process holds) is heard at once,
   * and nothing was served or claimed yet, so nothing drains (docs/operations.md#what-happens-on-shutdown).
   */
  let stopOpened: (() => Promise<void>) | null = null;
  // A stop asked while the store opened: the start goes on in the background until the exit, so the
  // stop is handed to it the moment it exists, before its coordinator can claim anything.
  let stopAskedEarly = false;
  return runUntilSignal({
    io,
    logger,
    start: () =>
      startServer(
        {
          store: storeFromDatabaseUrl(url, pooler),
          handlers,
          handlerNames: handlerNamesOf(options.handlerNames ?? io.env["PUNCTUAL_HANDLER_NAMES"]),
          logger,
          httpLogger: logger,
          host,
          port: Number(portText),
          runCoordinator: options.coordinator,
          policy: thresholds.policy,
          coordinator: thresholds.coordinator,
          ...(thresholds.rateLimit === undefined ? {} : { rateLimit: thresholds.rateLimit }),
          ...(options.deerflowApi === undefined ? {} : { deerflowApi: options.deerflowApi }),
          ...(options.langgraphApi === undefined ? {} : { langGraphApi: options.langgraphApi }),
          ...(options.langgraphProxy === true ? { langGraphProxy: true } : {}),
          ...(authProxy === undefined ? {} : { authProxy }),
          ...targets,
        },
        (stop) => {
          stopOpened = stop;
          if (stopAskedEarly) void stop().catch(() => undefined);
        },
      ),
    started: async ({ server, baseUrl }) => {
      logger.info(
        {
          url: baseUrl,
          database: redactUrl(url),
          coordinator: options.coordinator,
          handlers: [...new Set(["log", ...registerHandlers(handlers).keys()])],
          acceptedHandlerNames: handlerNamesOf(
            options.handlerNames ?? io.env["PUNCTUAL_HANDLER_NAMES"],
          ),
          thresholds: { ...server.runtime.thresholds, rateLimit: server.rateLimit },
        },
        "punctual serving",
      );
      if (options.initToken === true && !(await server.tokens.hasActiveToken())) {
        const { secret } = await server.tokens.create(
          { owner: "local", admin: true, label: "first run" },
          Date.now() as Instant,
        );
        io.stdout(firstRunMessage(baseUrl, secret));
      } else if (options.initToken === true) {
        // A second `npm start`: the first run's token was printed once and is not stored in clear.
        logger.info(
          "the database has a token already, so none is printed; lost it? " +
            `punctual token create --owner local --admin --database ${redactUrl(url)}`,
        );
      }
    },
    stop: async () => {
      // Still opening its store: the stop is not waited for, the exit drops the connection and a
      // migration waiting on its lock rolls back with it, as the worker's does.
      if (stopOpened === null) {
        stopAskedEarly = true;
        return;
      }
      await stopOpened();
    },
    stopWithinMs: stopDeadlineMs(thresholds),
    stopping:
      "stopping: /readyz answers 503, the API answers until the coordinator has drained (signal again to exit now)",
    stopped: "punctual stopped",
  });
}

export function serveCommand(io: ServeIo = processIo): Command {
  const command = withPoolerOptions(new Command("serve"))
    .description("serve the HTTP API (and run the coordinator) until SIGTERM or SIGINT")
    .option(
      "--database <url>",
      "a SQLite file path or sqlite: URL, or a postgres:// URL " +
        "(default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)",
    )
    .option("--port <n>", "port (default: $PUNCTUAL_PORT, else 8080; 0 picks a free one)")
    .option("--host <host>", "interface (default: $PUNCTUAL_HOST, else 127.0.0.1)")
    .option(
      "--handlers <module>",
      "a module exporting a { name: handler } map or a list of defineHandler handlers (`log` is built in)",
    )
    .option("--no-coordinator", "serve the API only (another process runs `punctual worker`)")
    .option(
      "--handler-names <a,b>",
      "handler names the workers run, accepted in tasks without loading their code (default: $PUNCTUAL_HANDLER_NAMES)",
    )
    .option("--init-token", "when the database has no token, create an admin token and print it")
    .option("--log-level <level>", "pino log level (default: $PUNCTUAL_LOG_LEVEL, else info)")
    .option(
      "--deerflow-api <server>",
      "also serve DeerFlow's /api/scheduled-tasks routes over this agent server (flavor deerflow)",
    )
    .option(
      "--langgraph-api <server>",
      "also serve LangGraph's crons API under /langgraph/<server> for this agent server (flavor langgraph; repeatable)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      "--langgraph-proxy",
      "also pass every other path under /langgraph/<server> through to that server, as docs/security.md#langgraph-proxy allows",
    )
    .option(
      "--auth-proxy-header <name>",
      "take the owner from this header when a trusted authenticating proxy sets it (docs/security.md#auth-proxy)",
    )
    .option(
      "--auth-proxy-secret-header <name>",
      "the proxy proves itself with $PUNCTUAL_AUTH_PROXY_SECRET in this header",
    )
    .option(
      "--auth-proxy-from <address>",
      "the proxy connects from this IP address or IP/prefix (repeatable)",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    );
  return withThresholdOptions(command, "serve")
    .exitOverride()
    .action(async (options: ServeOptions) => {
      const code = await runServe(options, io);
      if (code !== 0) throw new CommanderError(code, "punctual.serve", "serve failed");
    });
}
