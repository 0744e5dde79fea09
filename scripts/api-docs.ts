/**
 * docs/api.md as the server would generate it now (shared by `npm run docs:api` and its staleness test).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { apiMarkdown } from "../src/adapters/http/api-markdown.js";
import { createServer } from "../src/composition-server.js";
import { memoryStore } from "../src/adapters/storage/memory/memory-store.js";

export async function apiDocsMarkdown(): Promise<string> {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  const server = await createServer({
    store: memoryStore(),
    runCoordinator: false,
    version: pkg.version,
  });
  try {
    const response = await server.app.inject({ method: "GET", url: "/openapi.json" });
    const file = fileURLToPath(new URL("../docs/api.md", import.meta.url));
    const options = (await resolveConfig(file)) ?? {};
    return await format(apiMarkdown(response.json()), { ...options, filepath: file });
  } finally {
    await server.stop();
  }
}
