/**
 * What `serve`, `worker`, `migrate` and `token` read from their flags and the environment: the database
 * URL, the handlers module, and the targets' configuration (docs/operations.md; docs/operations.md).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { registerHandlers } from "../adapters/launchers/handler/handler-definition.js";
import type { HandlersOption } from "../adapters/launchers/handler/handler-definition.js";
import { parseAgentServers } from "../adapters/launchers/agent/agent-servers.js";
import type { AgentServerConfig } from "../adapters/launchers/agent/agent-servers.js";
import { parseAllowList } from "../adapters/launchers/webhook/address-guard.js";
import { publicBaseUrl } from "../adapters/callbacks/callback-tokens.js";
import type { Command } from "commander";
import { POSTGRES_POOLERS } from "../adapters/storage/postgres/postgres-pooler.js";
import type { PostgresPooler } from "../adapters/storage/postgres/postgres-pooler.js";
import type { ProcessIo } from "./process-io.js";
import { milliseconds } from "./threshold-options.js";

type Env = ProcessIo["env"];

/** The database URL: the flag, else `PUNCTUAL_DATABASE_URL`, else `./punctual.db`. */
export function databaseUrlOf(flag: string | undefined, env: Env): string {
  const fromEnv = env.PUNCTUAL_DATABASE_URL;
  return flag ?? (fromEnv === undefined || fromEnv === "" ? "./punctual.db" : fromEnv);
}

/** The flags of `serve`, `worker` and `migrate` for a PostgreSQL server behind a pooler. */
export interface PoolerFlags {
  readonly pgPooler?: string;
  readonly listenUrl?: string;
  readonly pgConnectTimeout?: string;
  readonly pgStatementTimeout?: string;
}

/**
 * What `storeFromDatabaseUrl` passes to a PostgreSQL store (docs/operations.md#pgbouncer,
 * docs/operations.md#database-timeouts).
 */
export interface PoolerSettings {
  readonly pooler?: PostgresPooler;
  readonly listenUrl?: string;
  readonly connectTimeoutMs?: number;
  readonly statementTimeoutMs?: number;
}

/**
 * `--pg-pooler` / `PUNCTUAL_PG_POOLER` (`none` or `transaction`) and `--listen-url` /
 * `PUNCTUAL_LISTEN_URL`. A bad value is a usage error (`usage(message)`).
 */
export function poolerSettingsOf(
  flags: PoolerFlags,
  env: Env,
  usage: (message: string) => Error,
): PoolerSettings {
  const mode = flags.pgPooler ?? env.PUNCTUAL_PG_POOLER ?? "";
  const listenUrl = flags.listenUrl ?? env.PUNCTUAL_LISTEN_URL ?? "";
  if (mode !== "" && !(POSTGRES_POOLERS as readonly string[]).includes(mode)) {
    throw usage(`--pg-pooler must be one of ${POSTGRES_POOLERS.join(", ")}, not "${mode}"`);
  }
  if (listenUrl !== "" && !/^postgres(ql)?:\/\//i.test(listenUrl)) {
    throw usage(`--listen-url must be a postgres:// URL, not "${redactUrl(listenUrl)}"`);
  }
  const connectText = flags.pgConnectTimeout ?? env.PUNCTUAL_PG_CONNECT_TIMEOUT ?? "";
  const statementText = flags.pgStatementTimeout ?? env.PUNCTUAL_PG_STATEMENT_TIMEOUT ?? "";
  return {
    ...(mode === "" ? {} : { pooler: mode as PostgresPooler }),
    ...(listenUrl === "" ? {} : { listenUrl }),
    ...(connectText === ""
      ? {}
      : { connectTimeoutMs: milliseconds("pg-connect-timeout", connectText, 100, usage) }),
    ...(statementText === ""
      ? {}
      : {
          statementTimeoutMs:
            statementText === "0"
              ? 0
              : milliseconds("pg-statement-timeout", statementText, 100, usage),
        }),
  };
}

/**
 * Adds `--pg-pooler`, the connection and statement timeouts (and, for the commands that listen,
 * `--listen-url`) to a command.
 */
export function withPoolerOptions(command: Command, listens = true): Command {
  command.option(
    "--pg-pooler <mode>",
    "none, or transaction behind PgBouncer in transaction mode (default: $PUNCTUAL_PG_POOLER, else none)",
  );
  command.option(
    "--pg-connect-timeout <duration>",
    "how long opening a PostgreSQL connection may take (default: $PUNCTUAL_PG_CONNECT_TIMEOUT, else 10s)",
  );
  command.option(
    "--pg-statement-timeout <duration>",
    "the longest a PostgreSQL statement may run, or a transaction idle, before it is cancelled; " +
      "0 for none (default: $PUNCTUAL_PG_STATEMENT_TIMEOUT, else 60s)",
  );
  if (!listens) return command;
  return command.option(
    "--listen-url <url>",
    "a direct postgres:// URL for LISTEN wake-ups when --database goes through a pooler " +
      "(default: $PUNCTUAL_LISTEN_URL; without it replicas poll)",
  );
}

/** Shows a database URL without its password. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}

/**
 * Loads a handlers module: its default export or its `handlers` export, a `{ name: handler }` map (a
 * value may be made by `defineHandler`) or a list of `defineHandler` definitions.
 * @throws a message saying what is wrong with the module
 */
export async function loadHandlers(specifier: string, cwd: string): Promise<HandlersOption> {
  const url = pathToFileURL(resolve(cwd, specifier)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(
      `cannot load ${specifier}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const map = module.handlers ?? module.default;
  if (typeof map !== "object" || map === null) {
    throw new Error(
      `${specifier} must export a { name: handler } map as its default export or as "handlers"`,
    );
  }
  let count: number;
  try {
    count = registerHandlers(map as HandlersOption).size;
  } catch (error) {
    throw new Error(`${specifier}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (count === 0) throw new Error(`${specifier} exports no handler`);
  return map as HandlersOption;
}

/** The targets' settings from the environment (docs/targets.md). */
export interface TargetEnvOptions {
  readonly webhookAllow: string[];
  readonly webhookSecret?: string;
  readonly agentServers: AgentServerConfig[];
  readonly publicUrl?: string;
}

/**
 * `PUNCTUAL_WEBHOOK_ALLOW`, `PUNCTUAL_WEBHOOK_SECRET`, `PUNCTUAL_AGENT_SERVERS` and
 * `PUNCTUAL_PUBLIC_URL`. A bad value is a usage error (`usage(message)`), reported before anything starts.
 */
export function targetOptionsOf(env: Env, usage: (message: string) => Error): TargetEnvOptions {
  const secret = env.PUNCTUAL_WEBHOOK_SECRET;
  const publicUrl = env.PUNCTUAL_PUBLIC_URL;
  let agentServers: AgentServerConfig[];
  try {
    agentServers = parseAgentServers(env.PUNCTUAL_AGENT_SERVERS ?? "", env);
    if (publicUrl !== undefined && publicUrl !== "") publicBaseUrl(publicUrl);
  } catch (error) {
    throw usage(error instanceof Error ? error.message : String(error));
  }
  return {
    webhookAllow: parseAllowList(env.PUNCTUAL_WEBHOOK_ALLOW),
    ...(secret === undefined || secret === "" ? {} : { webhookSecret: secret }),
    agentServers,
    ...(publicUrl === undefined || publicUrl === "" ? {} : { publicUrl }),
  };
}
