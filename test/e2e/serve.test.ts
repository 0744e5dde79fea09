/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * `punctual serve` end to end (issue 7 acceptance): the built CLI runs as a process on a temporary
 * SQLite file; a token made by `punctual token create`; a `log` task firing every second through the
 * HTTP API; runs succeed; pause, resume, two triggers with one idempotency key (one run), an edit with a
 * stale ETag (409), delete; SIGTERM exits 0. Every wait polls observable state with a bounded timeout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { createToken, startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

let dir: string;
let serve: CliProcess | null = null;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-serve-e2e-"));
}, 240_000);
afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("punctual serve", () => {
  it("serves the API: a log task fires every second, and the HTTP semantics hold", async () => {
    const db = join(dir, "punctual.db");
    const token = await createToken(db, "e2e");
    serve = startCli(["serve", "--database", db, "--port", "0", "--log-level", "info"], {
      cwd: dir,
    });
    const cli = serve;
    const base = await waitFor(
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1],
      { timeoutMs: 20_000, what: "the server to listen", describe: () => cli.output() },
    );
    const api = async (method: string, path: string, body?: unknown, headers = {}) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return {
        status: response.status,
        etag: response.headers.get("etag"),
        body: text === "" ? null : JSON.parse(text),
      };
    };

    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const task = await api("POST", "/v1/tasks", {
      title: "every second",
      schedule: { type: "cron", cron: "* * * * * *" },
      target: { kind: "handler", name: "log" },
    });
    expect(task.status).toBe(201);
    const id = task.body.task.id as string;

    const succeeded = async (min: number) =>
      waitFor(
        async () => {
          const runs = await api("GET", `/v1/tasks/${id}/runs?status=succeeded&limit=200`);
          return runs.body.items.length >= min ? (runs.body.items.length as number) : undefined;
        },
        { timeoutMs: 20_000, what: `${min} succeeded runs`, describe: () => cli.output() },
      );
    const before = await succeeded(2);
    expect(cli.output()).toContain('task \\"every second\\" fired');

    expect((await api("POST", `/v1/tasks/${id}/pause`)).body.status).toBe("paused");
    expect((await api("POST", `/v1/tasks/${id}/resume`)).body.status).toBe("enabled");
    await succeeded(before + 1);

    await api(
      "PATCH",
      `/v1/tasks/${id}`,
      { options: { overlap: "allow_all" } },
      { "if-match": "*" },
    );
    const key = { "idempotency-key": "e2e-trigger" };
    const first = await api("POST", `/v1/tasks/${id}/trigger`, undefined, key);
    const second = await api("POST", `/v1/tasks/${id}/trigger`, undefined, key);
    expect(first.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    const manual = await api("GET", `/v1/tasks/${id}/runs?trigger=manual`);
    expect(manual.body.items).toHaveLength(1);

    const current = await api("GET", `/v1/tasks/${id}`);
    const stale = await api(
      "PATCH",
      `/v1/tasks/${id}`,
      { title: "late edit" },
      { "if-match": `"${Number(current.body.version) - 1}"` },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.type).toBe("https://punctual.dev/problems/version_conflict");

    expect((await api("DELETE", `/v1/tasks/${id}?force=true`)).status).toBe(204);
    expect((await api("GET", `/v1/tasks/${id}`)).status).toBe(404);

    const exit = await stopCli(cli, "SIGTERM");
    expect(exit.code, cli.output()).toBe(0);
  }, 90_000);
});
