/**
 * The agent thread lookup against fake agent servers (docs/semantics.md#tasks, docs/security.md): a reused thread must exist on its
 * server, a thread tagged for another owner reads as not found, and a server that cannot answer is an
 * error rather than a missing thread. Threads of other targets are punctual's own labels.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AgentThreadLookup } from "../../../src/adapters/launchers/agent/agent-threads.js";
import type { OwnerId, ThreadId } from "../../../src/domain/ids.js";
import { serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import type { FakeAgentServerOptions } from "../../helpers/fake-agent-server.js";
import { closedPort } from "../../helpers/webhook-receiver.js";

const ALICE = "alice" as OwnerId;
const fakes: FakeAgentServer[] = [];

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function lookupOn(options: FakeAgentServerOptions = {}, headers = {}) {
  const server = await FakeAgentServer.start(options);
  fakes.push(server);
  const lookup = new AgentThreadLookup({
    servers: [serverConfig("main", server.url, { headers })],
  });
  return { server, lookup };
}

const thread = (): ThreadId => crypto.randomUUID() as ThreadId;

describe("AgentThreadLookup", () => {
  it("finds a thread that exists on the named server, and not one that does not", async () => {
    const { server, lookup } = await lookupOn({ apiKey: "k" }, { "X-Api-Key": "k" });
    const id = thread();
    server.createThread(id, { team: "data" });
    expect(await lookup.threadExists(ALICE, "agent:main", id)).toBe(true);
    expect(await lookup.threadExists(ALICE, "agent:main", thread())).toBe(false);
    expect(server.requests.at(-1)?.path).toMatch(/^\/threads\/[0-9a-f-]{36}$/);
  });

  it("finds a thread another client created, tagged for this owner", async () => {
    const { server, lookup } = await lookupOn({ flavor: "js" });
    const id = thread();
    const create = (ifExists: string) =>
      fetch(`${server.url}/threads`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          thread_id: id,
          metadata: { punctual_owner: "alice" },
          if_exists: ifExists,
        }),
      });
    expect((await create("raise")).status).toBe(200);
    expect((await create("raise")).status).toBe(409);
    expect((await create("do_nothing")).status).toBe(200);
    expect(await lookup.threadExists(ALICE, "agent:main", id)).toBe(true);
  });

  it("reads a thread id the server refuses as not found", async () => {
    const { lookup } = await lookupOn();
    expect(await lookup.threadExists(ALICE, "agent:main", "not-a-uuid" as ThreadId)).toBe(false);
  });

  it("reads another owner's thread as not found, and the owner's own as found", async () => {
    const { server, lookup } = await lookupOn();
    const bobs = thread();
    const alices = thread();
    server.createThread(bobs, { punctual_owner: "bob" });
    server.createThread(alices, { punctual_owner: "alice" });
    expect(await lookup.threadExists(ALICE, "agent:main", bobs)).toBe(false);
    expect(await lookup.threadExists(ALICE, "agent:main", alices)).toBe(true);
    expect(await lookup.threadExists("bob" as OwnerId, "agent:main", bobs)).toBe(true);
  });

  it("has no threads on an unknown server, and accepts any thread of other targets", async () => {
    const { server, lookup } = await lookupOn();
    expect(await lookup.threadExists(ALICE, "agent:elsewhere", thread())).toBe(false);
    expect(await lookup.threadExists(ALICE, "webhook", "anything" as ThreadId)).toBe(true);
    expect(await lookup.threadExists(ALICE, "handler", "anything" as ThreadId)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it("throws, naming the server and the thread, when the server cannot answer", async () => {
    const { lookup: refused } = await lookupOn({ apiKey: "right" }, { "X-Api-Key": "wrong" });
    const id = thread();
    await expect(refused.threadExists(ALICE, "agent:main", id)).rejects.toThrow(
      `asking agent server "main" for thread ${id}: it answered 401: Invalid API key`,
    );
    const { lookup: broken } = await lookupOn({ mode: { kind: "reply", status: 500 } });
    await expect(broken.threadExists(ALICE, "agent:main", id)).rejects.toThrow(/answered 500/);
    const dead = new AgentThreadLookup({
      servers: [serverConfig("main", `http://127.0.0.1:${await closedPort()}`)],
    });
    await expect(dead.threadExists(ALICE, "agent:main", id)).rejects.toThrow(
      /could not reach agent server "main"/,
    );
  });
});
