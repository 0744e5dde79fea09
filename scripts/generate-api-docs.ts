/**
 * `npm run docs:api`: writes docs/api.md from the OpenAPI document the server generates.
 */
import { writeFileSync } from "node:fs";
import { apiDocsMarkdown } from "./api-docs.js";

writeFileSync(new URL("../docs/api.md", import.meta.url), await apiDocsMarkdown());
console.log("wrote docs/api.md");
