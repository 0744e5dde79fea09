/**
 * docs/api.md, generated from the OpenAPI document (`npm run docs:api`); a test fails when it is stale.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function schemaText(schema: Json | undefined): string {
  if (schema === undefined) return "";
  if (typeof schema["$ref"] === "string") {
    const name = schema["$ref"].split("/").pop() ?? "";
    return `[${name}](#${name.toLowerCase()})`;
  }
  if (Array.isArray(schema["enum"]))
    return schema["enum"].map((v) => `\`${String(v)}\``).join(" \\| ");
  if (typeof schema["type"] === "string") return `\`${schema["type"]}\``;
  return "`object`";
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

export function apiMarkdown(doc: Json): string {
  const lines: string[] = [
    "# HTTP API",
    "",
    "<!-- Generated from the OpenAPI document by `npm run docs:api`; do not edit by hand. -->",
    "",
    "`punctual serve` answers JSON under `/v1`. Every call carries `Authorization: Bearer <token>`",
    "(made by `punctual token create`) except the routes marked *no token*. The live document is at",
    "`/openapi.json` and a browsable page at `/docs`. Timestamps are RFC 3339 UTC with `Z`.",
    "",
    "Errors are `application/problem+json` (RFC 9457): `type` is `https://punctual.dev/problems/<code>`,",
    "with `title`, `status`, `detail`, `errors[]` (`{field, message}`) for validation, and `limit`/`max`",
    "for limits. See [errors.md](errors.md) for the codes.",
    "",
    "HTTP semantics: `ETag` is the task's `version`; `PATCH` needs `If-Match` (428 without, 409 when",
    "stale or when the entity tag is not one punctual issued, 400 when it is not an entity tag),",
    "`DELETE` and `PUT /v1/tasks/by-key/{key}` take it optionally. `Idempotency-Key` on create and",
    "trigger returns the first answer to a repeat (`Idempotent-Replayed: true`), and 422 for the same",
    "key with another body. Lists are pages: `?limit=` (1..200, default 50) and `?cursor=` from the",
    "previous page's `next_cursor`.",
    "Limits: body 1 MiB (413), target input 256 KiB, page size 200, backfill 1,000 (422 naming the limit).",
    "A per-token rate limit answers 429 with `Retry-After`. Any route that needs the database answers 503",
    "`database_unavailable` with `Retry-After` when the database does not answer within its timeouts or",
    "cannot be reached: retry later.",
    "",
    "## Routes",
    "",
    "| method | path | summary | success |",
    "| --- | --- | --- | --- |",
  ];
  const details: string[] = [];
  for (const [path, item] of Object.entries(doc["paths"] as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const operation = op as Json;
      const statuses = Object.keys(operation["responses"] as Json);
      const success = statuses.filter((s) => Number(s) < 400).join(", ");
      const open = Array.isArray(operation["security"]) && operation["security"].length === 0;
      lines.push(
        `| ${method.toUpperCase()} | \`${path}\` | ${cell(String(operation["summary"]))}${open ? " (*no token*)" : ""} | ${success} |`,
      );
      details.push(
        `### ${method.toUpperCase()} \`${path}\``,
        "",
        cell(String(operation["summary"])),
        "",
      );
      const params = (operation["parameters"] ?? []) as Json[];
      if (params.length > 0) {
        details.push(
          "| parameter | in | required | schema | description |",
          "| --- | --- | --- | --- | --- |",
        );
        for (const p of params) {
          details.push(
            `| \`${String(p["name"])}\` | ${String(p["in"])} | ${p["required"] === true ? "yes" : "no"} | ${schemaText(p["schema"] as Json)} | ${cell(String(p["description"] ?? ""))} |`,
          );
        }
        details.push("");
      }
      const body = operation["requestBody"] as Json | undefined;
      if (body !== undefined) {
        const schema = ((body["content"] as Json)["application/json"] as Json)["schema"] as Json;
        details.push(
          `Body (\`application/json\`${body["required"] === true ? "" : ", optional"}): ${schemaText(schema)}`,
          "",
        );
      }
      details.push("| status | meaning | body |", "| --- | --- | --- |");
      for (const [status, r] of Object.entries(operation["responses"] as Json)) {
        const response = r as Json;
        const content = response["content"] as Json | undefined;
        const first =
          content === undefined ? undefined : (Object.entries(content)[0] as [string, Json]);
        details.push(
          `| ${status} | ${cell(String(response["description"]))} | ${first === undefined ? "" : `${schemaText(first[1]["schema"] as Json)} (\`${first[0]}\`)`} |`,
        );
      }
      details.push("");
    }
  }
  lines.push("", ...details, "## Schemas", "");
  for (const [name, schema] of Object.entries((doc["components"] as Json)["schemas"] as Json)) {
    lines.push(`### ${name}`, "", "```json", JSON.stringify(schema, null, 2), "```", "");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
