/**
 * Titles and descriptions display as themselves (docs/security.md#text-that-cannot-deceive): no control
 * characters, no bidirectional overrides or isolates, no lone surrogates; a description may hold newlines
 * and tabs.
 */
import { describe, expect, it } from "vitest";
import { checkTextFields, unsafeTextReason } from "../../src/domain/task-fields.js";
import { ValidationError } from "../../src/domain/errors.js";

const REFUSED_IN_BOTH: readonly (readonly [string, string])[] = [
  ["NUL", "a\u0000b"],
  ["BEL", "a\u0007b"],
  ["ESC (terminal escapes)", "a\u001b[31mb"],
  ["DEL", "a\u007fb"],
  ["C1 control (CSI)", "a\u009bb"],
  ["LRE", "a\u202ab"],
  ["RLE", "a\u202bb"],
  ["PDF", "a\u202cb"],
  ["LRO", "a\u202db"],
  ["RLO", "invoice\u202egnp.exe"],
  ["LRI", "a\u2066b"],
  ["RLI", "a\u2067b"],
  ["FSI", "a\u2068b"],
  ["PDI", "a\u2069b"],
  ["lone high surrogate", "a\ud83db"],
  ["lone low surrogate", "a\ude00b"],
  ["high surrogate at the end", "a\ud83d"],
  ["a lone CR", "a\rb"],
];

describe("unsafeTextReason", () => {
  it.each(REFUSED_IN_BOTH)("refuses %s in a title and a description", (_name, text) => {
    expect(unsafeTextReason(text, false)).not.toBeNull();
    expect(unsafeTextReason(text, true)).not.toBeNull();
  });

  it.each([
    ["LF", "a\nb"],
    ["CRLF", "a\r\nb"],
    ["tab", "a\tb"],
  ])("refuses %s in a title, takes it in a description", (_name, text) => {
    expect(unsafeTextReason(text, false)).toMatch(/control character/);
    expect(unsafeTextReason(text, true)).toBeNull();
  });

  it.each([
    "nightly export",
    "Ünïcödé — ok",
    "emoji 😀 (a surrogate pair)",
    "عربي and עברית (right-to-left letters, no overrides)",
    "zero\u200bwidth space",
  ])("takes %s", (text) => {
    expect(unsafeTextReason(text, false)).toBeNull();
  });

  it("names what it found and where", () => {
    expect(unsafeTextReason("ab\u202e", false)).toBe(
      "must not hold a bidirectional override (U+202E at 2)",
    );
    expect(unsafeTextReason("\u0000", false)).toBe(
      "must not hold a control character (U+0000 at 0)",
    );
    expect(unsafeTextReason("x\ud800", false)).toBe(
      "must be valid UTF-16 (a lone surrogate U+D800 at 1)",
    );
  });
});

describe("checkTextFields", () => {
  it("names each field refused", () => {
    let caught: unknown;
    try {
      checkTextFields({ title: "a\u0000", description: "b\u202e" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).errors.map((e) => e.field)).toEqual([
      "title",
      "description",
    ]);
  });

  it("leaves absent fields alone (an edit that does not send them)", () => {
    expect(() => {
      checkTextFields({});
    }).not.toThrow();
    expect(() => {
      checkTextFields({ description: null });
    }).not.toThrow();
  });
});
