/**
 * An agent target's run config and context (issue 17, item 3): defaults per server flavor and per
 * configured server, a task's overrides merged key by key, and what each flavor refuses at create.
 */
import { describe, expect, it } from "vitest";
import {
  FLAVOR_KNOBS,
  knobsBody,
  mergeKnobs,
  targetKnobs,
  targetProblems,
} from "../../../src/adapters/launchers/agent/agent-knobs.js";
import { parseAgentServers } from "../../../src/adapters/launchers/agent/agent-servers.js";
import { ValidationError } from "../../../src/domain/errors.js";
import type { AgentTarget } from "../../../src/domain/target.js";

function target(fields: Partial<AgentTarget> = {}): AgentTarget {
  return { kind: "agent", server: "main", assistantId: "agent", input: null, ...fields };
}

function fieldsOf(problems: readonly { field: string }[]): string[] {
  return problems.map((p) => p.field);
}

describe("agent run knobs", () => {
  it("merges configurable and context key by key, and replaces recursion_limit and tags", () => {
    const base = {
      config: { configurable: { a: 1, b: 2 }, recursionLimit: 100, tags: ["x"] },
      context: { k: "base", keep: true },
    };
    expect(
      mergeKnobs(base, {
        config: { configurable: { b: 3 }, tags: ["y", "z"] },
        context: { k: "task" },
      }),
    ).toEqual({
      config: { configurable: { a: 1, b: 3 }, recursionLimit: 100, tags: ["y", "z"] },
      context: { k: "task", keep: true },
    });
  });

  it("leaves empty knobs out of the request body", () => {
    expect(knobsBody(FLAVOR_KNOBS.langgraph)).toEqual({});
    expect(knobsBody({ config: { configurable: {}, tags: [] }, context: {} })).toEqual({});
    expect(knobsBody(targetKnobs(FLAVOR_KNOBS.deerflow, target()))).toEqual({
      config: { recursion_limit: 1000 },
      context: { non_interactive: true },
    });
  });

  it("refuses configurable keys the server or punctual owns, on every flavor", () => {
    for (const flavor of ["langgraph", "deerflow"] as const) {
      const problems = targetProblems(
        flavor,
        FLAVOR_KNOBS[flavor],
        target({ config: { configurable: { thread_id: "t", run_id: "r", fine: 1 } } }),
      );
      expect(fieldsOf(problems)).toEqual([
        "target.config.configurable.thread_id",
        "target.config.configurable.run_id",
      ]);
    }
  });

  it("refuses configurable and context together on LangGraph servers (langgraph-api answers 400)", () => {
    const both = target({ config: { configurable: { a: 1 } }, context: { b: 2 } });
    expect(fieldsOf(targetProblems("langgraph", FLAVOR_KNOBS.langgraph, both))).toEqual([
      "target.context",
    ]);
    const fromDefault = { config: { configurable: { a: 1 } }, context: {} };
    expect(
      fieldsOf(targetProblems("langgraph", fromDefault, target({ context: { b: 2 } }))),
    ).toEqual(["target.context"]);
    expect(
      targetProblems("langgraph", FLAVOR_KNOBS.langgraph, target({ context: { b: 2 } })),
    ).toEqual([]);
  });

  it("refuses DeerFlow context keys it would drop, and values of the wrong type", () => {
    const problems = targetProblems(
      "deerflow",
      FLAVOR_KNOBS.deerflow,
      target({
        context: {
          model_name: "m",
          thinking_enabled: "yes",
          max_total_subagents: 2.5,
          github_token: "x",
        },
      }),
    );
    expect(fieldsOf(problems)).toEqual([
      "target.context.thinking_enabled",
      "target.context.max_total_subagents",
      "target.context.github_token",
    ]);
    expect(problems[2]!.message).toMatch(/would be dropped/);
  });

  it("refuses DeerFlow input that is not an object of {role, content} messages", () => {
    const check = (input: AgentTarget["input"]) =>
      fieldsOf(targetProblems("deerflow", FLAVOR_KNOBS.deerflow, target({ input })));
    expect(check(null)).toEqual([]);
    expect(check({ messages: [{ role: "user", content: "hi" }] })).toEqual([]);
    expect(check("hi")).toEqual(["target.input"]);
    expect(check({ messages: "hi" })).toEqual(["target.input.messages"]);
    expect(check({ messages: [{ content: "hi" }, { role: "user", content: "ok" }] })).toEqual([
      "target.input.messages[0]",
    ]);
  });

  it("reads each server's defaults from PUNCTUAL_AGENT_SERVERS, over its flavor's", () => {
    const [lab, deer] = parseAgentServers(
      JSON.stringify([
        {
          name: "lab",
          url: "http://127.0.0.1:2024",
          config: { recursion_limit: 40, tags: ["nightly"] },
          context: { tier: "pro" },
        },
        {
          name: "deer",
          url: "http://127.0.0.1:8001/api",
          flavor: "deerflow",
          assistant_id: "lead_agent",
          context: { model_name: "qwen", non_interactive: false },
        },
      ]),
      {},
    );
    expect(lab!.knobs).toEqual({
      config: { recursionLimit: 40, tags: ["nightly"] },
      context: { tier: "pro" },
    });
    expect(deer!.knobs).toEqual({
      config: { recursionLimit: 1000 },
      context: { non_interactive: false, model_name: "qwen" },
    });
  });

  it("names the entry and field of a bad default", () => {
    let thrown: unknown = null;
    try {
      parseAgentServers(
        JSON.stringify([
          { name: "deer", url: "http://h/api", flavor: "deerflow", context: { colour: "red" } },
          { name: "lab", url: "http://h", config: { recursion_limit: 0, stream: true } },
        ]),
        {},
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    const fields = (thrown as ValidationError).errors.map((e) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        "PUNCTUAL_AGENT_SERVERS[0].context.colour",
        "PUNCTUAL_AGENT_SERVERS[1].config.recursion_limit",
        "PUNCTUAL_AGENT_SERVERS[1].config",
      ]),
    );
  });
});
