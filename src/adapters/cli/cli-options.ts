/**
 * What `serve`, `worker`, `migrate` and `token` read from their flags and the environment: the database
 * URL, the handlers module, and the targets' configuration (docs/operations.md; docs/operations.md).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { registerHandlers } from "../launchers/handler/handler-definition.js";
import type { HandlersOption } from "../launchers/handler/handler-definition.js";
import { parseAgentServers } from "../launchers/agent/agent-servers.js";
import type { AgentServerConfig } from "../launchers/agent/agent-servers.js";
import { parseAllowList } from "../launchers/webhook/address-guard.js";
import { publicBaseUrl } from "../callbacks/callback-tokens.js";
import type { ProcessIo } from "./process-io.js";

type Env = ProcessIo["env"];

/** The database URL: the flag, else `PUNCTUAL_DATABASE_URL`, else `./punctual.db`. */
export function databaseUrlOf(flag: string | undefined, env: Env): string {
  const fromEnv = env.PUNCTUAL_DATABASE_URL;
  return flag ?? (fromEnv === undefined || fromEnv === "" ? "./punctual.db" : fromEnv);
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
