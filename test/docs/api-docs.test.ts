/**
 * docs/api.md must be what `npm run docs:api` generates from the OpenAPI document today.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiDocsMarkdown } from "../../scripts/api-docs.js";

describe("docs/api.md", () => {
  it("is in sync with the OpenAPI document (run `npm run docs:api` after changing a route)", async () => {
    const current = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    expect(current).toBe(await apiDocsMarkdown());
  });
});
