/**
 * Input schemas that zod checks only loosely because a domain parser checks them precisely afterwards
 * (the schedule: `parseSchedule` reports every problem at once, in its own words). Each carries the
 * shape it stands for, so its TypeScript type and the OpenAPI document still say exactly what to send.
 */
import { z } from "zod";

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
  shapes.set(schema, shape);
  return schema;
}

/** The shape a loosely checked schema documents, for the OpenAPI document. */
export function documentedShapeOf(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  return shapes.get(schema);
}
