/**
 * `punctual serve` and `worker` read the targets' settings from the environment (docs/security.md,
 * docs/targets.md): `PUNCTUAL_WEBHOOK_ALLOW`, `PUNCTUAL_WEBHOOK_SECRET`, `PUNCTUAL_AGENT_SERVERS` and
 * `PUNCTUAL_PUBLIC_URL`; a bad value is a usage error raised before anything starts.
 */
import { describe, expect, it } from "vitest";
import { targetOptionsOf } from "../../src/cli/cli-options.js";
import {
  deerflowApiTarget,
  parseAgentServers,
} from "../../src/adapters/launchers/agent/agent-servers.js";

const usage = (message: string): Error => new Error(`usage: ${message}`);

describe("targetOptionsOf", () => {
  it("reads the allow list and the signing secret", () => {
    expect(
      targetOptionsOf(
        { PUNCTUAL_WEBHOOK_ALLOW: "127.0.0.1, hooks.internal", PUNCTUAL_WEBHOOK_SECRET: "s" },
        usage,
      ),
    ).toEqual({
      webhookAllow: ["127.0.0.1", "hooks.internal"],
      webhookSecret: "s",
      agentServers: [],
    });
  });

  it("allows nothing, signs with each task's secret and knows no agent server when unset", () => {
    expect(targetOptionsOf({}, usage)).toEqual({ webhookAllow: [], agentServers: [] });
    expect(
      targetOptionsOf({ PUNCTUAL_WEBHOOK_SECRET: "", PUNCTUAL_PUBLIC_URL: "" }, usage),
    ).toEqual({ webhookAllow: [], agentServers: [] });
  });

  it("reads the agent servers, resolving secrets from the environment, and the public URL", () => {
    const options = targetOptionsOf(
      {
        PUNCTUAL_AGENT_SERVERS: JSON.stringify([
          {
            name: "lab",
            url: "https://agents.example.com/",
            headers: { "X-Api-Key": "${LAB_KEY}" },
          },
        ]),
        LAB_KEY: "k-123",
        PUNCTUAL_PUBLIC_URL: "https://punctual.example.com",
      },
      usage,
    );
    expect(options.agentServers).toMatchObject([
      { name: "lab", url: "https://agents.example.com", headers: { "X-Api-Key": "k-123" } },
    ]);
    expect(options.publicUrl).toBe("https://punctual.example.com");
  });

  it("turns a bad agent server list or public URL into a usage error naming it", () => {
    expect(() => targetOptionsOf({ PUNCTUAL_AGENT_SERVERS: '[{"name": "x"}]' }, usage)).toThrow(
      /usage: PUNCTUAL_AGENT_SERVERS\[0\]\.url/,
    );
    expect(() =>
      targetOptionsOf(
        {
          PUNCTUAL_AGENT_SERVERS:
            '[{"name": "x", "url": "http://h", "headers": {"K": "${MISSING}"}}]',
        },
        usage,
      ),
    ).toThrow(/usage: .*MISSING/);
    expect(() => targetOptionsOf({ PUNCTUAL_PUBLIC_URL: "ftp://x" }, usage)).toThrow(
      /usage: PUNCTUAL_PUBLIC_URL must be http or https/,
    );
  });
});

describe("deerflowApiTarget (serve --deerflow-api)", () => {
  const servers = parseAgentServers(
    JSON.stringify([
      { name: "lab", url: "http://127.0.0.1:2024" },
      { name: "deer", url: "http://127.0.0.1:8001/api", flavor: "deerflow" },
      { name: "agents", url: "http://h/api", flavor: "deerflow", assistant_id: "researcher" },
    ]),
    {},
  );

  it("names a DeerFlow server and its assistant, lead_agent unless configured", () => {
    expect(deerflowApiTarget("deer", servers)).toEqual({
      server: "deer",
      assistantId: "lead_agent",
    });
    expect(deerflowApiTarget("agents", servers)).toEqual({
      server: "agents",
      assistantId: "researcher",
    });
  });

  it("refuses an unknown server and one of another flavor", () => {
    expect(() => deerflowApiTarget("nope", servers)).toThrow(/DeerFlow servers: deer, agents/);
    expect(() => deerflowApiTarget("lab", servers)).toThrow(/flavor langgraph, not deerflow/);
  });
});
