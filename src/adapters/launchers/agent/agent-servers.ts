/**
 * The agent servers `agent` targets may name (`PUNCTUAL_AGENT_SERVERS`, docs/semantics.md#tasks): parsed once at start,
 * every mistake reported with the entry and the field it is in. Secrets in headers are read from the
 * environment (`"${NAME}"`), so the configuration itself can be committed; they never appear in errors.
 */
import { readFileSync } from "node:fs";
import * as z from "zod";
import { ValidationError } from "../../../domain/errors.js";
import type { FieldError } from "../../../domain/errors.js";
import type { AgentKnobs } from "./agent-knobs.js";
import { parseServerKnobs } from "./agent-knobs.js";

/**
 * Which implementation a server is, where they differ in ways punctual must respect: `langgraph` (the
 * Python langgraph-api and the JS server) and `deerflow` (DeerFlow's gateway, which refuses unknown run
 * options and never calls run webhooks).
 */
export const AGENT_SERVER_FLAVORS = ["langgraph", "deerflow"] as const;
export type AgentServerFlavor = (typeof AGENT_SERVER_FLAVORS)[number];

/** One configured agent server, normalised (defaults applied, secrets resolved). */
export interface AgentServerConfig {
  /** The name `agent` targets use (`target.server`); threads live in the scope `agent:<name>`. */
  readonly name: string;
  /** The base URL, without a trailing slash; paths such as `/threads/{id}/runs` are appended to it. */
  readonly url: string;
  /** Sent on every request (`X-Api-Key`, ...), with `${NAME}` references already resolved. */
  readonly headers: Readonly<Record<string, string>>;
  readonly flavor: AgentServerFlavor;
  /** Whether the server calls a run's `webhook` when it ends; if not, punctual only polls. */
  readonly webhooks: boolean;
  /** How long one request may take, connection to last byte. @default 30000 */
  readonly requestTimeoutMs: number;
  /** How often the coordinator asks the server about a running run. @default 5000 */
  readonly pollIntervalMs: number;
  /** The run config and context every run gets unless its task says otherwise (flavor's, then ours). */
  readonly knobs: AgentKnobs;
  /**
   * The assistant tasks made through the DeerFlow-compatible API run (`serve --deerflow-api`).
   * @default "lead_agent" for DeerFlow, none for the others
   */
  readonly assistantId: string | null;
}

/** The names of the process's environment variables and their values (`process.env`). */
export type Environment = Readonly<Record<string, string | undefined>>;

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** DeerFlow's default assistant, the one its own scheduler always uses. */
export const DEERFLOW_ASSISTANT_ID = "lead_agent";
export const DEFAULT_POLL_INTERVAL_MS = 5_000;

const ENV_LABEL = "PUNCTUAL_AGENT_SERVERS";
const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** RFC 9110 `token`: what a header name may contain. */
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers punctual sets itself or that the HTTP client owns. */
const RESERVED_HEADERS = new Set(["content-type", "content-length", "host", "connection"]);
const REFERENCE_PATTERN = /\$\{([^}]*)\}/g;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

function milliseconds(max: number): z.ZodInt {
  return z
    .int({ error: "must be a whole number of milliseconds" })
    .min(100, "must be at least 100 ms")
    .max(max, `must be at most ${max} ms`);
}

const serverSchema = z.strictObject({
  name: z
    .string()
    .regex(
      NAME_PATTERN,
      "must be 1 to 63 lower-case letters, digits, '_' or '-', starting with a letter or a digit",
    ),
  url: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
  flavor: z.enum(AGENT_SERVER_FLAVORS, { error: 'must be "langgraph" or "deerflow"' }).optional(),
  webhooks: z.boolean({ error: "must be true or false" }).optional(),
  request_timeout_ms: milliseconds(600_000).optional(),
  poll_interval_ms: milliseconds(3_600_000).optional(),
  config: z.unknown().optional(),
  context: z.unknown().optional(),
  assistant_id: z.string().min(1).max(200).optional(),
});
type ServerInput = z.infer<typeof serverSchema>;

/**
 * Parses the agent server configuration: `text` is either the JSON itself (it starts with `[` or `{`) or
 * the path of a JSON file holding it. The JSON is a list of servers (a single server object is accepted
 * as a list of one); blank text means no servers.
 *
 * @example parseAgentServers('[{"name":"main","url":"http://127.0.0.1:2024"}]', process.env)
 * @throws validation_failed naming each offending entry and field, e.g. `PUNCTUAL_AGENT_SERVERS[1].url`
 */
export function parseAgentServers(text: string, env: Environment): AgentServerConfig[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  const inline = trimmed.startsWith("[") || trimmed.startsWith("{");
  const label = inline ? ENV_LABEL : trimmed;
  const json = inline ? trimmed : readConfigFile(trimmed);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ValidationError([{ field: label, message: `is not valid JSON: ${reason}` }], {
      cause: error,
    });
  }
  const entries = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  const errors: FieldError[] = [];
  const servers: AgentServerConfig[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    const server = parseEntry(entry, `${label}[${index}]`, env, errors);
    if (server === null) return;
    const first = seen.get(server.name);
    if (first !== undefined) {
      errors.push({
        field: `${label}[${index}].name`,
        message: `"${server.name}" is already the name of ${label}[${first}]; names must be unique`,
      });
      return;
    }
    seen.set(server.name, index);
    servers.push(server);
  });
  if (errors.length > 0) throw new ValidationError(errors);
  return servers;
}

function readConfigFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ValidationError(
      [
        {
          field: ENV_LABEL,
          message: `is neither inline JSON (starting with "[" or "{") nor a readable file: ${reason}`,
        },
      ],
      { cause: error },
    );
  }
}

/** One entry, or null with its problems appended to `errors`. */
function parseEntry(
  entry: unknown,
  at: string,
  env: Environment,
  errors: FieldError[],
): AgentServerConfig | null {
  const result = serverSchema.safeParse(entry);
  const named = nameOf(entry);
  const problems: FieldError[] = [];
  let server: AgentServerConfig | null = null;
  if (result.success) {
    const input = result.data;
    const url = normaliseUrl(input.url, `${at}.url`, problems);
    const headers = resolveHeaders(input.headers ?? {}, `${at}.headers`, env, problems);
    const flavor = input.flavor ?? "langgraph";
    if (flavor === "deerflow" && input.webhooks === true) {
      problems.push({
        field: `${at}.webhooks`,
        message:
          'DeerFlow never calls run webhooks (punctual polls it instead): leave "webhooks" out or set it to false',
      });
    }
    const knobs = parseServerKnobs(input, at, flavor, problems);
    if (url !== null) server = build(input, url, headers, flavor, knobs);
  } else {
    for (const issue of result.error.issues) {
      problems.push({ field: fieldOf(at, issue), message: messageOf(issue) });
    }
  }
  errors.push(...problems.map((problem) => ({ ...problem, message: problem.message + named })));
  return problems.length === 0 ? server : null;
}

function build(
  input: ServerInput,
  url: string,
  headers: Record<string, string>,
  flavor: AgentServerFlavor,
  knobs: AgentKnobs,
): AgentServerConfig {
  return {
    name: input.name,
    url,
    headers,
    flavor,
    webhooks: flavor === "langgraph" && (input.webhooks ?? true),
    requestTimeoutMs: input.request_timeout_ms ?? DEFAULT_REQUEST_TIMEOUT_MS,
    pollIntervalMs: input.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS,
    knobs,
    assistantId: input.assistant_id ?? (flavor === "deerflow" ? DEERFLOW_ASSISTANT_ID : null),
  };
}

function nameOf(entry: unknown): string {
  if (typeof entry !== "object" || entry === null) return "";
  const name = (entry as { name?: unknown }).name;
  return typeof name === "string" && name !== "" ? ` (server "${name}")` : "";
}

function fieldOf(at: string, issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `${at}.${issue.keys.join(", ")}`;
  return issue.path.length === 0 ? at : `${at}.${issue.path.map(String).join(".")}`;
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `${issue.keys.length === 1 ? "is not a known field" : "are not known fields"} (known: ${Object.keys(serverSchema.shape).join(", ")})`;
  }
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) {
    return "is required";
  }
  return issue.message;
}

function normaliseUrl(text: string, field: string, errors: FieldError[]): string | null {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // reported below, as a URL of another scheme is
  }
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    errors.push({ field, message: `must be an absolute http:// or https:// URL, not "${text}"` });
    return null;
  }
  const problem =
    url.username !== "" || url.password !== ""
      ? "must not carry credentials: put them in headers, read from the environment"
      : url.search !== "" || url.hash !== ""
        ? "must not have a query or a fragment: it is the base that API paths are appended to"
        : null;
  if (problem !== null) {
    errors.push({ field, message: problem });
    return null;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Header values with every `${NAME}` replaced from `env`; errors never quote a value (it may be secret). */
function resolveHeaders(
  headers: Readonly<Record<string, string>>,
  field: string,
  env: Environment,
  errors: FieldError[],
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const at = `${field}.${name}`;
    if (!HEADER_NAME_PATTERN.test(name)) {
      errors.push({ field: at, message: "is not a valid HTTP header name" });
      continue;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      errors.push({ field: at, message: "is set by punctual and cannot be configured" });
      continue;
    }
    const text = value.replace(REFERENCE_PATTERN, (_match, reference: string) => {
      const message = !ENV_NAME_PATTERN.test(reference)
        ? `"\${${reference}}" is not an environment variable reference (\${NAME}, NAME of letters, digits and '_')`
        : env[reference] === undefined
          ? `reads \${${reference}} from the environment, but ${reference} is not set`
          : env[reference] === ""
            ? `reads \${${reference}} from the environment, but ${reference} is empty`
            : null;
      if (message !== null) errors.push({ field: at, message });
      return env[reference] ?? "";
    });
    if (/[\r\n\0]/.test(text)) {
      errors.push({ field: at, message: "must not contain line breaks or NUL characters" });
      continue;
    }
    resolved[name] = text;
  }
  return resolved;
}

/**
 * The server `serve --deerflow-api SERVER` maps DeerFlow's scheduled-task routes onto, and the assistant
 * its tasks run.
 * @throws validation_failed when no server has that name or it is not of flavor `deerflow`
 */
export function deerflowApiTarget(
  name: string,
  servers: readonly AgentServerConfig[],
): { readonly server: string; readonly assistantId: string } {
  const server = servers.find((candidate) => candidate.name === name);
  if (server?.flavor !== "deerflow") {
    const known = servers.filter((s) => s.flavor === "deerflow").map((s) => s.name);
    throw ValidationError.of(
      "--deerflow-api",
      server === undefined
        ? `no agent server named "${name}" is configured (${ENV_LABEL}); DeerFlow servers: ${known.join(", ") || "none"}`
        : `agent server "${name}" is of flavor ${server.flavor}, not deerflow`,
    );
  }
  return { server: server.name, assistantId: server.assistantId ?? DEERFLOW_ASSISTANT_ID };
}

/**
 * The server `serve --langgraph-api SERVER` serves LangGraph's crons routes for.
 * @throws validation_failed when no server has that name or it is not of flavor `langgraph`
 */
export function langGraphApiTarget(
  name: string,
  servers: readonly AgentServerConfig[],
): { readonly server: string } {
  const server = servers.find((candidate) => candidate.name === name);
  if (server?.flavor !== "langgraph") {
    const known = servers.filter((s) => s.flavor === "langgraph").map((s) => s.name);
    throw ValidationError.of(
      "--langgraph-api",
      server === undefined
        ? `no agent server named "${name}" is configured (${ENV_LABEL}); LangGraph servers: ${known.join(", ") || "none"}`
        : `agent server "${name}" is of flavor ${server.flavor}, not langgraph`,
    );
  }
  return { server: server.name };
}
