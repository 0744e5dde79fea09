/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * `GET /v1/replicas` (docs/api.md#replicas) on a real listening server with its coordinator: the
 * replicas, their last heartbeat, whether they are live and the handler names they registered; for
 * admin tokens only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Instant } from "../../../src/domain/time.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let server: TestServer;
let admin = "";

beforeAll(async () => {
  server = await startTestServer({
    runCoordinator: true,
    handlers: { build: () => undefined },
  });
  admin = await server.token("ops", true);
  // A replica silent for a minute, of a version that registers no names.
  await server.server.runtime.store.replicas.heartbeat("old", (Date.now() - 60_000) as Instant);
});
afterAll(() => server.stop());

describe("GET /v1/replicas", () => {
  it("lists this process's replica, live, with the handlers it serves, and a silent one", async () => {
    let answer = await call(server.url, "GET", "/v1/replicas", { token: admin });
    // The coordinator's first heartbeat lands once it has started: wait for it (bounded).
    for (let i = 0; i < 100 && answer.body.items.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await call(server.url, "GET", "/v1/replicas", { token: admin });
    }
    expect(answer.status).toBe(200);
    expect(answer.body.liveness_timeout_ms).toBe(10_000);
    const [self, old] = answer.body.items as [{ heartbeat_at: string }, unknown];
    expect(self).toMatchObject({ live: true, handler_names: ["build", "log"] });
    expect(Date.parse(self.heartbeat_at)).toBeGreaterThan(Date.now() - 10_000);
    expect(old).toMatchObject({ id: "old", live: false, handler_names: null });
  });

  it("refuses an owner's token with 403 and no token with 401", async () => {
    const owner = await server.token("ann");
    const refused = await call(server.url, "GET", "/v1/replicas", { token: owner });
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe("https://punctual.dev/problems/forbidden");
    expect((await call(server.url, "GET", "/v1/replicas")).status).toBe(401);
  });
});
