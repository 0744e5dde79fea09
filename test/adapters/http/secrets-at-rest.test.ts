/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * No secret in a log or a readable file (docs/security.md#secrets-at-rest): `punctual serve` on a SQLite
 * file runs a webhook task to its completion callback; with `PUNCTUAL_SECRET_KEY` set, neither the log
 * lines nor the bytes of the database, its -wal and -shm hold the bearer token, the task's signing
 * secret or the run's completion token. Without the key the files are still 0600, and the secret is in
 * clear, as the docs say.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { sqlite } from "../../../src/adapters/storage/sqlite/sqlite.js";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import { call, startTestServer } from "./http-harness.js";

const dir = mkdtempSync(join(tmpdir(), "punctual-secrets-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function filesOf(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

function bytesOf(path: string): string {
  return filesOf(path)
    .map((file) => {
      try {
        return readFileSync(file).toString("latin1");
      } catch {
        return "";
      }
    })
    .join("\n");
}

/** A full fire on a fresh file: create, trigger, the receiver's 202, the completion callback. */
async function fullFire(path: string) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  const log = pino({ level: "debug" }, sink);
  const receiver = await startReceiver({ "/job": json(202, { accepted: true }) });
  const t = await startTestServer({
    store: sqlite(path),
    runCoordinator: true,
    webhookAllow: ["127.0.0.1"],
    httpLogger: log,
    logger: log,
  });
  try {
    const bearer = await t.token("alice");
    const created = await call(t.url, "POST", "/v1/tasks", {
      token: bearer,
      headers: { "idempotency-key": "first" },
      body: {
        title: "export",
        schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
        target: { kind: "webhook", url: receiver.url("/job") },
      },
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.task.webhook_secret;
    const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
      token: bearer,
    });
    const runId: string = run.body.id;
    const completionUrl = await waitFor(
      () =>
        receiver
          .requestsTo("/job")
          .map((r) => JSON.parse(r.body) as { run: { id: string }; completion_url: string })
          .find((body) => body.run.id === runId)?.completion_url,
      { timeoutMs: 10_000, what: "the webhook request" },
    );
    await waitFor(
      async () =>
        (await call(t.url, "GET", `/v1/runs/${runId}`, { token: bearer })).body.status === "running"
          ? true
          : undefined,
      { timeoutMs: 10_000, what: "the run to be running" },
    );
    const url = new URL(completionUrl);
    const done = await call(t.url, "POST", `${url.pathname}${url.search}`, {
      body: { status: "succeeded", result: { rows: 1 } },
    });
    expect(done.body).toMatchObject({ recorded: true });
    const token = url.searchParams.get("token") ?? "";
    // While the server runs, the -wal and -shm exist (closing checkpoints and removes them).
    const modes = filesOf(path).map((file) => (statSync(file).mode & 0o777).toString(8));
    const running = bytesOf(path);
    return { secret, token, bearer, lines, modes, running };
  } finally {
    await t.stop();
    await receiver.close();
  }
}

describe("secrets at rest and in logs", () => {
  it("with PUNCTUAL_SECRET_KEY, no token or secret in the log or the database files", async () => {
    const before = process.env["PUNCTUAL_SECRET_KEY"];
    process.env["PUNCTUAL_SECRET_KEY"] = randomBytes(32).toString("base64");
    try {
      const path = join(dir, "sealed.db");
      const { secret, token, bearer, lines, modes, running } = await fullFire(path);
      expect(lines.join("").length).toBeGreaterThan(0);
      const log = lines.join("\n");
      const files = `${running}\n${bytesOf(path)}`;
      expect(files).toContain("pcs1:");
      for (const value of [secret, token, bearer]) {
        expect(value.length).toBeGreaterThan(16);
        expect(log).not.toContain(value);
        expect(files).not.toContain(value);
      }
      expect(log).not.toContain("token=");
      expect(modes).toEqual(["600", "600", "600"]);
    } finally {
      if (before === undefined) delete process.env["PUNCTUAL_SECRET_KEY"];
      else process.env["PUNCTUAL_SECRET_KEY"] = before;
    }
  });

  it("without a key, the files are 0600 and hold the secret in clear, as the docs say", async () => {
    expect(process.env["PUNCTUAL_SECRET_KEY"] ?? "").toBe("");
    const path = join(dir, "clear.db");
    const { secret, token, lines, modes, running } = await fullFire(path);
    expect(modes).toEqual(["600", "600", "600"]);
    expect(`${running}\n${bytesOf(path)}`).toContain(secret);
    expect(lines.join("\n")).not.toContain(token);
    const docs = readFileSync(new URL("../../../docs/security.md", import.meta.url), "utf8");
    expect(docs).toContain("Without a key, the secrets are stored in clear");
  });
});
