/**
 * Parsing `PUNCTUAL_AGENT_SERVERS` (docs/semantics.md#tasks): inline JSON or a file, defaults per flavor, secrets read
 * from the environment, and every kind of mistake reported with its entry and field (never a secret).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAgentServers } from "../../../src/adapters/launchers/agent/agent-servers.js";
import { ValidationError } from "../../../src/domain/errors.js";
import type { FieldError } from "../../../src/domain/errors.js";

const ENV = { LANGSMITH_KEY: "lsv2-secret", EMPTY: "" };

function problems(text: string, env: Record<string, string> = ENV): FieldError[] {
  try {
    parseAgentServers(text, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).not.toContain("lsv2-secret");
    return [...(error as ValidationError).errors];
  }
  throw new Error(`expected ${text} to be refused`);
}

const list = (...servers: unknown[]): string => JSON.stringify(servers);

describe("parseAgentServers", () => {
  it("reads an inline list, applying each flavor's defaults", () => {
    const text = list(
      { name: "main", url: "https://agents.example.com/api/langgraph/" },
      { name: "deer_1", url: "http://127.0.0.1:8001/api", flavor: "deerflow" },
      {
        name: "cloud",
        url: "https://x.us.langgraph.app",
        headers: { "X-Api-Key": "${LANGSMITH_KEY}", Authorization: "Bearer ${LANGSMITH_KEY}" },
        webhooks: false,
        request_timeout_ms: 10_000,
        poll_interval_ms: 2_000,
      },
    );
    expect(parseAgentServers(`  ${text}\n`, ENV)).toEqual([
      {
        name: "main",
        url: "https://agents.example.com/api/langgraph",
        headers: {},
        flavor: "langgraph",
        webhooks: true,
        requestTimeoutMs: 30_000,
        pollIntervalMs: 5_000,
        knobs: { config: {}, context: {} },
        assistantId: null,
      },
      {
        name: "deer_1",
        url: "http://127.0.0.1:8001/api",
        headers: {},
        flavor: "deerflow",
        webhooks: false,
        requestTimeoutMs: 30_000,
        pollIntervalMs: 5_000,
        // DeerFlow's own scheduler runs non-interactive, with a recursion limit of 1000.
        knobs: { config: { recursionLimit: 1000 }, context: { non_interactive: true } },
        assistantId: "lead_agent",
      },
      {
        name: "cloud",
        url: "https://x.us.langgraph.app",
        headers: { "X-Api-Key": "lsv2-secret", Authorization: "Bearer lsv2-secret" },
        flavor: "langgraph",
        webhooks: false,
        requestTimeoutMs: 10_000,
        pollIntervalMs: 2_000,
        knobs: { config: {}, context: {} },
        assistantId: null,
      },
    ]);
  });

  it("reads a single server object, and nothing from blank text", () => {
    const one = parseAgentServers('{"name":"main","url":"http://localhost:2024"}', {});
    expect(one.map((s) => s.url)).toEqual(["http://localhost:2024"]);
    expect(parseAgentServers("   ", {})).toEqual([]);
    expect(parseAgentServers("[]", {})).toEqual([]);
  });

  describe("from a file", () => {
    let dir: string | null = null;
    afterEach(async () => {
      if (dir !== null) await rm(dir, { recursive: true, force: true });
      dir = null;
    });

    it("reads the file a path names, and labels its problems with the path", async () => {
      dir = await mkdtemp(join(tmpdir(), "punctual-agents-"));
      const path = join(dir, "servers.json");
      await writeFile(path, list({ name: "main", url: "http://127.0.0.1:2024" }));
      expect(parseAgentServers(path, {})[0]?.name).toBe("main");
      await writeFile(path, list({ name: "main", url: "ftp://x" }));
      expect(problems(path)).toEqual([
        {
          field: `${path}[0].url`,
          message: 'must be an absolute http:// or https:// URL, not "ftp://x" (server "main")',
        },
      ]);
    });

    it("says when the path cannot be read", () => {
      const [problem] = problems("/nonexistent/agent-servers.json");
      expect(problem?.field).toBe("PUNCTUAL_AGENT_SERVERS");
      expect(problem?.message).toMatch(/neither inline JSON .* nor a readable file: ENOENT/);
    });
  });

  it.each<[string, unknown, FieldError]>([
    [
      "a name that is not lower-case",
      { name: "Main", url: "http://a" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].name",
        message: `must be 1 to 63 lower-case letters, digits, '_' or '-', starting with a letter or a digit (server "Main")`,
      },
    ],
    [
      "a missing url",
      { name: "main" },
      { field: "PUNCTUAL_AGENT_SERVERS[0].url", message: 'is required (server "main")' },
    ],
    [
      "a url that is no URL",
      { name: "main", url: "localhost:2024" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].url",
        message:
          'must be an absolute http:// or https:// URL, not "localhost:2024" (server "main")',
      },
    ],
    [
      "a relative url",
      { name: "main", url: "/api" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].url",
        message: 'must be an absolute http:// or https:// URL, not "/api" (server "main")',
      },
    ],
    [
      "credentials in the url",
      { name: "main", url: "https://u:p@a.example" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].url",
        message:
          'must not carry credentials: put them in headers, read from the environment (server "main")',
      },
    ],
    [
      "a query in the url",
      { name: "main", url: "https://a.example/?token=1" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].url",
        message:
          'must not have a query or a fragment: it is the base that API paths are appended to (server "main")',
      },
    ],
    [
      "an unknown field",
      { name: "main", url: "http://a", pollIntervalMs: 10 },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].pollIntervalMs",
        message:
          'is not a known field (known: name, url, headers, flavor, webhooks, request_timeout_ms, poll_interval_ms, config, context, assistant_id) (server "main")',
      },
    ],
    [
      "an unknown flavor",
      { name: "main", url: "http://a", flavor: "aegra" },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].flavor",
        message: 'must be "langgraph" or "deerflow" (server "main")',
      },
    ],
    [
      "webhooks on DeerFlow",
      { name: "d", url: "http://a", flavor: "deerflow", webhooks: true },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].webhooks",
        message:
          'DeerFlow never calls run webhooks (punctual polls it instead): leave "webhooks" out or set it to false (server "d")',
      },
    ],
    [
      "a fractional timeout",
      { name: "main", url: "http://a", request_timeout_ms: 1.5 },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].request_timeout_ms",
        message: 'must be a whole number of milliseconds (server "main")',
      },
    ],
    [
      "a poll interval too short",
      { name: "main", url: "http://a", poll_interval_ms: 10 },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].poll_interval_ms",
        message: 'must be at least 100 ms (server "main")',
      },
    ],
    [
      "an unset variable",
      { name: "main", url: "http://a", headers: { "X-Api-Key": "${NOPE}" } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X-Api-Key",
        message: 'reads ${NOPE} from the environment, but NOPE is not set (server "main")',
      },
    ],
    [
      "an empty variable",
      { name: "main", url: "http://a", headers: { "X-Api-Key": "${EMPTY}" } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X-Api-Key",
        message: 'reads ${EMPTY} from the environment, but EMPTY is empty (server "main")',
      },
    ],
    [
      "a malformed reference",
      { name: "main", url: "http://a", headers: { "X-Api-Key": "${1KEY}" } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X-Api-Key",
        message: `"\${1KEY}" is not an environment variable reference (\${NAME}, NAME of letters, digits and '_') (server "main")`,
      },
    ],
    [
      "a bad header name",
      { name: "main", url: "http://a", headers: { "X Api": "v" } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X Api",
        message: 'is not a valid HTTP header name (server "main")',
      },
    ],
    [
      "a header punctual sets",
      { name: "main", url: "http://a", headers: { "content-type": "text/plain" } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.content-type",
        message: 'is set by punctual and cannot be configured (server "main")',
      },
    ],
    [
      "a non-string header value",
      { name: "main", url: "http://a", headers: { "X-Api-Key": 42 } },
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X-Api-Key",
        message: 'Invalid input: expected string, received number (server "main")',
      },
    ],
    [
      "an entry that is no object",
      "http://a",
      {
        field: "PUNCTUAL_AGENT_SERVERS[0]",
        message: "Invalid input: expected object, received string",
      },
    ],
  ])("refuses %s", (_what, entry, problem) => {
    expect(problems(list(entry))).toEqual([problem]);
  });

  it("refuses a header value with a line break, even one read from the environment", () => {
    const text = list({ name: "main", url: "http://a", headers: { "X-Api-Key": "${KEY}" } });
    expect(problems(text, { KEY: "lsv2-secret\r\nX-Evil: 1" })).toEqual([
      {
        field: "PUNCTUAL_AGENT_SERVERS[0].headers.X-Api-Key",
        message: 'must not contain line breaks or NUL characters (server "main")',
      },
    ]);
  });

  it("refuses a name used twice, naming the first entry", () => {
    const text = list({ name: "main", url: "http://a" }, { name: "main", url: "http://b" });
    expect(problems(text)).toEqual([
      {
        field: "PUNCTUAL_AGENT_SERVERS[1].name",
        message: '"main" is already the name of PUNCTUAL_AGENT_SERVERS[0]; names must be unique',
      },
    ]);
  });

  it("reports every problem of every entry at once", () => {
    const text = list({ name: "a", url: "ftp://a" }, { url: "http://b" });
    expect(problems(text).map((p) => p.field)).toEqual([
      "PUNCTUAL_AGENT_SERVERS[0].url",
      "PUNCTUAL_AGENT_SERVERS[1].name",
    ]);
  });

  it("refuses text that is not JSON", () => {
    const [problem] = problems('[{"name": "main",');
    expect(problem?.field).toBe("PUNCTUAL_AGENT_SERVERS");
    expect(problem?.message).toMatch(/^is not valid JSON: /);
  });
});
