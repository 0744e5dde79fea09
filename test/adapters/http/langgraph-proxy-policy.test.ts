/**
 * Who may reach what through `--langgraph-proxy` (docs/security.md#langgraph-proxy), decided per request
 * for an owner that is not an admin (admins pass everything). The real server and the SDK drive it in
 * test/e2e/langgraph-crons.test.ts.
 */
import { describe, expect, it } from "vitest";
import { onThread, proxyDecision } from "../../../src/adapters/http/langgraph-proxy.js";

const decide = (method: string, path: string, body?: unknown) =>
  proxyDecision(method, path, "alice", body);

describe("the LangGraph proxy's policy", () => {
  it("passes the server's health and its assistants, read only", () => {
    for (const [method, path] of [
      ["GET", "/ok"],
      ["GET", "/info"],
      ["GET", "/assistants/echo"],
      ["GET", "/assistants/echo/graph"],
      ["POST", "/assistants/search"],
      ["POST", "/assistants/count"],
    ] as const) {
      expect(decide(method, path)).toEqual({ kind: "pass" });
    }
    for (const [method, path] of [
      ["POST", "/assistants"],
      ["PATCH", "/assistants/echo"],
      ["DELETE", "/assistants/echo"],
    ] as const) {
      expect(decide(method, path)).toMatchObject({ kind: "refuse", status: 403 });
    }
  });

  it("tags the threads it creates and filters searches by the owner, whatever the body says", () => {
    const body = { metadata: { team: "a", punctual_owner: "bob" } };
    const tagged = { metadata: { team: "a", punctual_owner: "alice" } };
    expect(decide("POST", "/threads", body)).toEqual({ kind: "pass", body: tagged });
    expect(decide("POST", "/threads/search", body)).toEqual({ kind: "pass", body: tagged });
    expect(decide("POST", "/threads/count", undefined)).toEqual({
      kind: "pass",
      body: { metadata: { punctual_owner: "alice" } },
    });
    expect(decide("POST", "/runs/stream", { input: {} })).toEqual({
      kind: "pass",
      body: { input: {}, metadata: { punctual_owner: "alice" } },
    });
  });

  it("asks who owns a thread before anything on it, and before creating one by id", () => {
    expect(decide("GET", "/threads/t-1/state")).toEqual({ kind: "thread", threadId: "t-1" });
    expect(decide("DELETE", "/threads/t-1")).toEqual({ kind: "thread", threadId: "t-1" });
    expect(decide("POST", "/threads", { thread_id: "t-1" })).toEqual({
      kind: "thread",
      threadId: "t-1",
    });
    const request = { owner: "alice", creating: false, body: undefined };
    expect(onThread("alice", "t-1", request)).toEqual({ kind: "pass" });
    for (const owner of ["bob", "", null]) {
      expect(onThread(owner, "t-1", request)).toEqual({
        kind: "refuse",
        status: 404,
        detail: "Thread t-1 not found",
      });
    }
    const creating = { owner: "alice", creating: true, body: { thread_id: "t-1" } };
    expect(onThread(null, "t-1", creating)).toMatchObject({ kind: "pass" });
    expect(onThread("bob", "t-1", creating)).toMatchObject({ kind: "refuse", status: 409 });
    expect(onThread("", "t-1", creating)).toMatchObject({ kind: "refuse", status: 409 });
  });

  it("refuses every path it does not list", () => {
    for (const [method, path] of [
      ["GET", "/store/namespaces"],
      ["POST", "/store/namespaces"],
      ["POST", "/runs/batch"],
      ["GET", "/runs"],
      ["GET", "/threads"],
      ["POST", "/mcp"],
    ] as const) {
      expect(decide(method, path)).toMatchObject({ kind: "refuse", status: 403 });
    }
  });
});
