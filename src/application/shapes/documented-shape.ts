/**
 * Schemas documented by another shape than the one zod checks: inputs that zod checks only loosely
 * because a domain parser checks them precisely afterwards (the schedule: `parseSchedule` reports every
 * problem at once, in its own words), and shapes whose exact JSON Schema helps no reader (any JSON
 * value). The OpenAPI document shows the documented shape.
 */
import * as z from "zod";

const shapes = new WeakMap<z.core.$ZodType, z.core.$ZodType>();
const anyObject = z.record(z.string(), z.unknown());

/**
 * A schema typed and documented as `shape` that accepts any object: anything else is refused with the
 * message zod gives a non-object, and the fields are left to the domain.
 */
export function checkedAsAnyObject<T>(shape: z.core.$ZodType<unknown, T>): z.ZodCustom<T, T> {
  const schema = z.custom<T>().check((ctx) => {
    const parsed = anyObject.safeParse(ctx.value);
    if (parsed.success) return;
    for (const { message, path } of parsed.error.issues) {
      ctx.issues.push({ code: "custom", message, path, input: ctx.value });
    }
  });
  return documentedAs(schema, shape);
}

/** Documents `schema` as `shape` in the OpenAPI document; its checks and its type stay its own. */
export function documentedAs<S extends z.core.$ZodType>(schema: S, shape: z.core.$ZodType): S {
  shapes.set(schema, shape);
  return schema;
}

/** The shape a loosely checked schema documents, for the OpenAPI document. */
export function documentedShapeOf(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  return shapes.get(schema);
}
