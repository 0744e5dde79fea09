/**
 * An agent run's knobs (docs/targets.md#run-config-and-context): LangGraph's RunnableConfig overrides
 * (`configurable`, `recursion_limit`, `tags`) and the static runtime `context`. Each server has defaults
 * (its flavor's, then `PUNCTUAL_AGENT_SERVERS`), a task's target overrides them key by key, and the
 * result is checked against what the server's flavor accepts: langgraph-api refuses `configurable` and
 * `context` together; DeerFlow forwards only the context keys it knows and drops the rest silently, so
 * any other key is refused here rather than lost there.
 */
import * as z from "zod";
import {
  agentRunConfigFrom,
  agentRunConfigSchema,
} from "../../../application/shapes/target-input.js";
import type { FieldError } from "../../../domain/errors.js";
import type { AgentRunConfig, AgentTarget, JsonValue } from "../../../domain/target.js";

export type AgentServerFlavorName = "langgraph" | "deerflow";

/** The config and context a run is sent with. */
export interface AgentKnobs {
  readonly config: AgentRunConfig;
  readonly context: Readonly<Record<string, JsonValue>>;
}

/**
 * What each flavor sends unless told otherwise. DeerFlow's own scheduler runs its tasks non-interactive
 * (no clarifying question nobody would answer; honoured for its internal token) with a recursion limit
 * of 1000 (its chat default of 100 failed long scheduled runs: DeerFlow #4848, #5386).
 */
export const FLAVOR_KNOBS: Readonly<Record<AgentServerFlavorName, AgentKnobs>> = {
  langgraph: { config: {}, context: {} },
  deerflow: { config: { recursionLimit: 1000 }, context: { non_interactive: true } },
};

/** `configurable` keys the server owns (the thread is punctual's, the rest the server's). */
const SERVER_OWNED_CONFIGURABLE = [
  "thread_id",
  "checkpoint_id",
  "checkpoint_ns",
  "run_id",
  "assistant_id",
  "graph_id",
];

/** The `context` keys DeerFlow's run endpoint forwards to its agent, with their types. */
export const DEERFLOW_CONTEXT_KEYS: Readonly<Record<string, "string" | "boolean" | "integer">> = {
  agent_name: "string",
  model_name: "string",
  mode: "string",
  reasoning_effort: "string",
  thinking_enabled: "boolean",
  is_plan_mode: "boolean",
  subagent_enabled: "boolean",
  max_concurrent_subagents: "integer",
  max_total_subagents: "integer",
  is_bootstrap: "boolean",
  non_interactive: "boolean",
  disable_clarification: "boolean",
};

const contextSchema = z.record(z.string().min(1).max(200), z.json());

/** `over` on top of `base`: `configurable` and `context` merge key by key, the rest is replaced. */
export function mergeKnobs(base: AgentKnobs, over: Partial<AgentKnobs>): AgentKnobs {
  const a = base.config;
  const b = over.config ?? {};
  const configurable =
    a.configurable === undefined && b.configurable === undefined
      ? undefined
      : { ...a.configurable, ...b.configurable };
  const recursionLimit = b.recursionLimit ?? a.recursionLimit;
  const tags = b.tags ?? a.tags;
  return {
    config: {
      ...(configurable === undefined ? {} : { configurable }),
      ...(recursionLimit === undefined ? {} : { recursionLimit }),
      ...(tags === undefined ? {} : { tags }),
    },
    context: { ...base.context, ...over.context },
  };
}

/**
 * A server's default knobs from its configuration entry (`config`, `context`), over its flavor's.
 * Problems are appended to `problems`, named `<at>.config...`, `<at>.context...`.
 */
export function parseServerKnobs(
  input: { readonly config?: unknown; readonly context?: unknown },
  at: string,
  flavor: AgentServerFlavorName,
  problems: FieldError[],
): AgentKnobs {
  const over: { config?: AgentRunConfig; context?: Record<string, JsonValue> } = {};
  if (input.config !== undefined) {
    const parsed = agentRunConfigSchema.safeParse(input.config);
    if (parsed.success) over.config = agentRunConfigFrom(parsed.data);
    else problems.push(...zodProblems(parsed.error, `${at}.config`));
  }
  if (input.context !== undefined) {
    const parsed = contextSchema.safeParse(input.context);
    if (parsed.success) over.context = parsed.data;
    else problems.push(...zodProblems(parsed.error, `${at}.context`));
  }
  const knobs = mergeKnobs(FLAVOR_KNOBS[flavor], over);
  problems.push(...knobProblems(flavor, knobs, `${at}.config`, `${at}.context`));
  return knobs;
}

/** The knobs a run of `target` is sent with on a server whose defaults are `defaults`. */
export function targetKnobs(defaults: AgentKnobs, target: AgentTarget): AgentKnobs {
  return mergeKnobs(defaults, {
    ...(target.config === undefined ? {} : { config: target.config }),
    ...(target.context === undefined ? {} : { context: target.context }),
  });
}

/**
 * What a task's agent target would send that its server's flavor refuses or drops (checked at create
 * and edit, so the task is refused with 422 instead of failing every launch).
 */
export function targetProblems(
  flavor: AgentServerFlavorName,
  defaults: AgentKnobs,
  target: AgentTarget,
): FieldError[] {
  const problems = knobProblems(
    flavor,
    targetKnobs(defaults, target),
    "target.config",
    "target.context",
  );
  if (flavor === "deerflow") problems.push(...deerflowInputProblems(target.input));
  return problems;
}

/** The knobs as the create-run body carries them (snake_case), leaving out what is empty. */
export function knobsBody(knobs: AgentKnobs): {
  config?: Record<string, JsonValue>;
  context?: Record<string, JsonValue>;
} {
  const { configurable, recursionLimit, tags } = knobs.config;
  const config: Record<string, JsonValue> = {
    ...(configurable === undefined || Object.keys(configurable).length === 0
      ? {}
      : { configurable }),
    ...(recursionLimit === undefined ? {} : { recursion_limit: recursionLimit }),
    ...(tags === undefined || tags.length === 0 ? {} : { tags }),
  };
  return {
    ...(Object.keys(config).length === 0 ? {} : { config }),
    ...(Object.keys(knobs.context).length === 0 ? {} : { context: knobs.context }),
  };
}

function knobProblems(
  flavor: AgentServerFlavorName,
  knobs: AgentKnobs,
  configField: string,
  contextField: string,
): FieldError[] {
  const problems: FieldError[] = [];
  const configurable = knobs.config.configurable ?? {};
  for (const key of SERVER_OWNED_CONFIGURABLE) {
    if (key in configurable) {
      problems.push({
        field: `${configField}.configurable.${key}`,
        message: "is set by the agent server (and the thread by punctual): leave it out",
      });
    }
  }
  switch (flavor) {
    case "langgraph":
      if (Object.keys(configurable).length > 0 && Object.keys(knobs.context).length > 0) {
        problems.push({
          field: contextField,
          message:
            "langgraph-api refuses a run with both config.configurable and context: use one of them",
        });
      }
      break;
    case "deerflow":
      problems.push(...deerflowContextProblems(knobs.context, contextField));
      break;
  }
  return problems;
}

function deerflowContextProblems(
  context: Readonly<Record<string, JsonValue>>,
  field: string,
): FieldError[] {
  const problems: FieldError[] = [];
  for (const [key, value] of Object.entries(context)) {
    const type = DEERFLOW_CONTEXT_KEYS[key];
    if (type === undefined) {
      problems.push({
        field: `${field}.${key}`,
        message: `is not a context key DeerFlow forwards (it would be dropped); known: ${Object.keys(DEERFLOW_CONTEXT_KEYS).join(", ")}`,
      });
    } else if (!hasType(value, type)) {
      problems.push({ field: `${field}.${key}`, message: `must be ${articled(type)}` });
    }
  }
  return problems;
}

/** DeerFlow takes `input` as an object (or null) whose `messages` are `{role, content}` objects. */
function deerflowInputProblems(input: JsonValue): FieldError[] {
  if (input === null) return [];
  if (typeof input !== "object" || Array.isArray(input)) {
    return [{ field: "target.input", message: "DeerFlow takes an object (or null) as input" }];
  }
  const messages = (input as Record<string, JsonValue>)["messages"];
  if (messages === undefined) return [];
  if (!Array.isArray(messages)) {
    return [{ field: "target.input.messages", message: "must be a list of messages" }];
  }
  const problems: FieldError[] = [];
  (messages as readonly JsonValue[]).forEach((message, index) => {
    const ok =
      typeof message === "object" &&
      message !== null &&
      !Array.isArray(message) &&
      typeof (message as Record<string, JsonValue>)["role"] === "string" &&
      (message as Record<string, JsonValue>)["content"] !== undefined;
    if (!ok) {
      problems.push({
        field: `target.input.messages[${index}]`,
        message: 'must be {"role": ..., "content": ...}, e.g. {"role": "user", "content": "..."}',
      });
    }
  });
  return problems;
}

function hasType(value: JsonValue, type: "string" | "boolean" | "integer"): boolean {
  return type === "integer" ? Number.isInteger(value) : typeof value === type;
}

function articled(type: string): string {
  return type === "integer" ? "an integer" : `a ${type}`;
}

function zodProblems(error: z.ZodError, at: string): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.length === 0 ? at : `${at}.${issue.path.map(String).join(".")}`,
    message: issue.message,
  }));
}
