/**
 * The input shapes of a task's target (docs/targets.md): an agent server's assistant, a webhook or an
 * in-process handler, defined once with zod and mapped to the domain's `Target` here.
 */
import * as z from "zod";
import { ON_RUN_COMPLETED, WEBHOOK_METHODS, WEBHOOK_SIGNATURES } from "../../domain/target.js";
import type { AgentRunConfig, Target } from "../../domain/target.js";
import { jsonValueSchema } from "./input-primitives.js";

const jsonValue = jsonValueSchema;
const name = z.string().min(1).max(200);
/** A header name (RFC 9110 5.1: a token). */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: visible characters, spaces and tabs (no CR, LF or NUL, RFC 9110 5.5). */
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** An absolute http or https URL (whether its host may be called is checked at launch, docs/security.md). */
const webhookUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine(
    (text) => {
      try {
        const { protocol } = new URL(text); // URL.parse needs Node 22
        return protocol === "https:" || protocol === "http:";
      } catch {
        return false;
      }
    },
    { error: "must be an absolute http or https URL" },
  );

/** LangGraph's RunnableConfig fields an agent target may set (the server's defaults fill the rest). */
export const agentRunConfigSchema = z.strictObject({
  configurable: z.record(z.string().min(1).max(200), jsonValue).optional(),
  recursion_limit: z.int().min(1).max(100_000).optional(),
  tags: z.array(z.string().min(1).max(200)).max(50).optional(),
});

export const agentTargetInputSchema = z.strictObject({
  kind: z.literal("agent"),
  server: name,
  assistant_id: name,
  input: jsonValue.optional(),
  config: agentRunConfigSchema.optional(),
  context: z.record(z.string().min(1).max(200), jsonValue).optional(),
  metadata: z.record(z.string().min(1).max(200), jsonValue).optional(),
  on_run_completed: z.enum(ON_RUN_COMPLETED).optional(),
});

export const webhookTargetInputSchema = z.strictObject({
  kind: z.literal("webhook"),
  url: webhookUrl,
  method: z.enum(WEBHOOK_METHODS).optional(),
  headers: z
    .record(
      z
        .string()
        .min(1)
        .max(256)
        .regex(HTTP_TOKEN, { error: "a header name is letters, digits and !#$%&'*+-.^_`|~" }),
      z.string().max(4096).regex(HTTP_FIELD_VALUE, {
        error: "a header value has no line breaks or control characters",
      }),
    )
    .optional(),
  input: jsonValue.optional(),
  cancel_url: webhookUrl.nullable().optional(),
  idempotent: z.boolean().optional(),
  signature: z.enum(WEBHOOK_SIGNATURES).optional(),
});

export const handlerTargetInputSchema = z.strictObject({
  kind: z.literal("handler"),
  name,
  input: jsonValue.optional(),
});

export const targetSchema = z.discriminatedUnion("kind", [
  agentTargetInputSchema,
  webhookTargetInputSchema,
  handlerTargetInputSchema,
]);

export function targetFrom(input: z.output<typeof targetSchema>): Target {
  switch (input.kind) {
    case "agent":
      return {
        kind: "agent",
        server: input.server,
        assistantId: input.assistant_id,
        input: input.input ?? null,
        ...(input.config === undefined ? {} : { config: agentRunConfigFrom(input.config) }),
        ...(input.context === undefined ? {} : { context: input.context }),
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
        ...(input.on_run_completed === undefined ? {} : { onRunCompleted: input.on_run_completed }),
      };
    case "webhook":
      return {
        kind: "webhook",
        url: input.url,
        method: input.method ?? "POST",
        headers: input.headers ?? {},
        input: input.input ?? null,
        cancelUrl: input.cancel_url ?? null,
        idempotent: input.idempotent ?? false,
        ...(input.signature === undefined ? {} : { signature: input.signature }),
      };
    case "handler":
      return { kind: "handler", name: input.name, input: input.input ?? null };
  }
}

/** `target.config` (or a server's default config) in the domain's names. */
export function agentRunConfigFrom(input: z.output<typeof agentRunConfigSchema>): AgentRunConfig {
  return {
    ...(input.configurable === undefined ? {} : { configurable: input.configurable }),
    ...(input.recursion_limit === undefined ? {} : { recursionLimit: input.recursion_limit }),
    ...(input.tags === undefined ? {} : { tags: input.tags }),
  };
}
