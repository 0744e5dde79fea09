/**
 * The OpenAPI 3.1 document, generated from the route declarations and their zod schemas (`z.toJSONSchema`,
 * JSON Schema 2020-12, which OpenAPI 3.1 uses as is). Named shapes go to `components.schemas`; a
 * loosely checked input is documented by the shape it stands for (`documented-shape.ts`).
 */
import * as z from "zod";
import { documentedShapeOf } from "../../application/shapes/documented-shape.js";
import { exposedProblems } from "./error-map.js";
import { PROBLEM_CONTENT_TYPE } from "./problem.js";
import { openApiPath } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { NAMED_SCHEMAS } from "./schemas.js";

type JsonSchema = Record<string, unknown>;

interface Converter {
  readonly convert: (schema: z.core.$ZodType, io: "input" | "output") => JsonSchema;
  readonly components: Record<string, JsonSchema>;
}

/** Converts schemas, hoisting named and recursive sub-schemas into shared components. */
function converter(): Converter {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of NAMED_SCHEMAS) registry.add(schema, { id });
  const components: Record<string, JsonSchema> = {};
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== "object" || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$schema" || key === "$defs") continue;
      out[key] =
        key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")
          ? `#/components/schemas/${inner.slice("#/$defs/".length)}`
          : rewrite(inner);
    }
    return out;
  };
  /** Adds a component; one name must always stand for one shape (as input and as output alike). */
  const addComponent = (name: string, json: JsonSchema): void => {
    if (name.startsWith("__schema")) {
      throw new Error(
        `an unnamed recursive shape (${JSON.stringify(json).slice(0, 120)}): name it in NAMED_SCHEMAS`,
      );
    }
    const known = components[name];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(json)) {
      throw new Error(`the component ${name} would stand for two different shapes`);
    }
    components[name] = json;
  };
  const convert = (schema: z.core.$ZodType, io: "input" | "output"): JsonSchema => {
    const json = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      metadata: registry,
      override: (ctx) => {
        const shape = documentedShapeOf(ctx.zodSchema);
        if (shape !== undefined) {
          for (const key of Object.keys(ctx.jsonSchema))
            Reflect.deleteProperty(ctx.jsonSchema, key);
          Object.assign(ctx.jsonSchema, convert(shape, io));
        }
        const discriminator = discriminatorOf(ctx.zodSchema);
        if (discriminator !== null) ctx.jsonSchema["discriminator"] = discriminator;
        // Descriptions, formats and examples given with `.meta()` live in the global registry.
        const meta = z.globalRegistry.get(ctx.zodSchema);
        if (meta === undefined) return;
        const rest: Record<string, unknown> = { ...meta };
        delete rest["id"];
        Object.assign(ctx.jsonSchema, rest);
      },
    }) as JsonSchema;
    const defs = (json["$defs"] ?? {}) as Record<string, JsonSchema>;
    for (const [name, def] of Object.entries(defs)) addComponent(name, rewrite(def) as JsonSchema);
    const root = rewrite(json) as JsonSchema;
    const named = NAMED_SCHEMAS.find(([, s]) => s === schema);
    if (named === undefined) return root;
    const ref = `#/components/schemas/${named[0]}`;
    // A registered schema comes back as a `$ref` to its own `$defs` entry, already hoisted above:
    // writing that reference over the component would make it point at itself.
    if (root["$ref"] !== ref) addComponent(named[0], root);
    return { $ref: ref };
  };
  return { components, convert };
}

/**
 * OpenAPI's `discriminator` of a discriminated union whose members are all named components, so that
 * generators for other languages map `type: cron` to `CronSchedule` without trying each member.
 */
function discriminatorOf(schema: z.core.$ZodType): JsonSchema | null {
  const def = schema._zod.def as { discriminator?: unknown; options?: readonly z.core.$ZodType[] };
  const property = def.discriminator;
  if (typeof property !== "string" || def.options === undefined) return null;
  const mapping: Record<string, string> = {};
  for (const option of def.options) {
    const name = NAMED_SCHEMAS.find(([, named]) => named === option)?.[0];
    const values = option._zod.propValues?.[property];
    if (name === undefined || values === undefined) return null;
    for (const value of values) mapping[String(value)] = `#/components/schemas/${name}`;
  }
  return { propertyName: property, mapping };
}

function parameters(spec: RouteSpec, convert: Converter["convert"]): unknown[] {
  const list: unknown[] = [];
  const add = (where: "path" | "query", schema: z.ZodType | undefined): void => {
    if (schema === undefined) return;
    const json = convert(schema, "input");
    const properties = (json["properties"] ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json["required"] ?? []) as string[]);
    for (const [name, property] of Object.entries(properties)) {
      const { description, ...rest } = property;
      list.push({
        name,
        in: where,
        required: where === "path" || required.has(name),
        ...(typeof description === "string" ? { description } : {}),
        schema: rest,
      });
    }
  };
  add("path", spec.params);
  add("query", spec.query);
  for (const header of spec.headers ?? []) {
    list.push({
      name: header.name,
      in: "header",
      required: header.required,
      description: header.description,
      schema: { type: "string" },
    });
  }
  return list;
}

export interface OpenApiInfo {
  readonly version: string;
}

/** The OpenAPI 3.1 document of `routes`. */
export function buildOpenApiDocument(routes: readonly RouteSpec[], info: OpenApiInfo): JsonSchema {
  const { convert, components } = converter();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    if (spec.hidden === true) continue;
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(spec.responses)) {
      const contentType =
        response.contentType ?? (Number(status) >= 400 ? PROBLEM_CONTENT_TYPE : "application/json");
      responses[status] = {
        description: response.description,
        ...(response.schema === undefined
          ? {}
          : { content: { [contentType]: { schema: convert(response.schema, "output") } } }),
      };
    }
    const operation = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [...spec.tags],
      ...(spec.auth ? {} : { security: [] }),
      parameters: parameters(spec, convert),
      ...(spec.body === undefined
        ? {}
        : {
            requestBody: {
              required: !spec.body.safeParse(undefined).success,
              content: { "application/json": { schema: convert(spec.body, "input") } },
            },
          }),
      responses,
    };
    const path = openApiPath(spec.url);
    paths[path] = { ...paths[path], [spec.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "punctual",
      version: info.version,
      description:
        "A durable scheduler. Every call carries `Authorization: Bearer <token>` except the health, " +
        "metrics and documentation routes. Errors are `application/problem+json` (RFC 9457); problem " +
        `types: ${exposedProblems()
          .map((p) => `\`${p.code}\` (${p.status})`)
          .join(", ")}.`,
    },
    servers: [{ url: "/" }],
    components: {
      schemas: components,
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
