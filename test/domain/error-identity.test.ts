/**
 * Error identity across two copies of punctual (docs/errors.md#two-copies-of-punctual): a library and a
 * plugin that each bundle punctual load the errors module twice. An error thrown by one copy is a
 * `PunctualError` (and an instance of its own class) to the other copy's `isPunctualError` and
 * `instanceof`, by the registered symbol, though not by prototype.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as one from "../../src/domain/errors.js";

type ErrorsModule = typeof one;

/** A second instance of the errors module: the same file under another URL, evaluated again. */
async function secondCopy(): Promise<ErrorsModule> {
  const url = new URL("../../src/domain/errors.ts", import.meta.url);
  url.search = "?copy=two";
  return (await import(/* @vite-ignore */ url.href)) as ErrorsModule;
}

describe("error identity across two copies of the module", () => {
  it("loads two distinct copies (their classes differ, so prototypes alone do not match)", async () => {
    const two = await secondCopy();
    expect(two.NotFoundError).not.toBe(one.NotFoundError);
    const error = new two.NotFoundError("task", "t1");
    expect(Function.prototype[Symbol.hasInstance].call(one.NotFoundError, error)).toBe(false);
  });

  it("answers isPunctualError and instanceof PunctualError for the other copy's errors", async () => {
    const two = await secondCopy();
    const error: unknown = new two.LeaseLostError("the claim was taken over");
    expect(one.isPunctualError(error)).toBe(true);
    expect(error instanceof one.PunctualError).toBe(true);
    expect(two.isPunctualError(new one.NotFoundError("run", "r1"))).toBe(true);
  });

  it("answers instanceof a class for the other copy's error of that class only", async () => {
    const two = await secondCopy();
    const error: unknown = new two.NotFoundError("task", "t1");
    expect(error instanceof one.NotFoundError).toBe(true);
    expect(error instanceof one.ValidationError).toBe(false);
    expect(two.ValidationError.of("title", "too long") instanceof one.ValidationError).toBe(true);
  });

  it("does not take an error that is not punctual's, nor a look-alike without the mark", () => {
    const lookAlike = Object.assign(new Error("missing"), {
      name: "NotFoundError",
      code: "not_found",
    });
    expect(one.isPunctualError(lookAlike)).toBe(false);
    expect(lookAlike instanceof one.NotFoundError).toBe(false);
    expect(one.isPunctualError(null)).toBe(false);
    expect(one.isPunctualError("not_found")).toBe(false);
  });

  it("gives each class the name its instances carry, which the cross-copy check compares", () => {
    const source = readFileSync(new URL("../../src/domain/errors.ts", import.meta.url), "utf8");
    const classes = [
      ...source.matchAll(/class (\w+) extends PunctualError \{[^}]*?name = "(\w+)"/g),
    ];
    expect(classes.length).toBe(source.match(/extends PunctualError/g)?.length);
    for (const [, className, name] of classes) expect(name).toBe(className);
  });
});
