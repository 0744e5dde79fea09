/**
 * The webhook receiver and `punctual serve` as two processes: a once task fires, the receiver verifies
 * the Standard Webhooks signature, answers 202 and completes the run through completion_url; a request
 * signed with the previous secret is accepted while rotating, a replay is dropped by its idempotency
 * key, and a forged request is refused. Every wait polls observable state with a bounded timeout.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PunctualClient } from "punctual/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../test/e2e/build.js";
import { createToken, startCli, stopCli, waitFor } from "../../../test/e2e/process.js";
import type { CliProcess } from "../../../test/e2e/process.js";

const CURRENT = `whsec_${Buffer.from("the current secret, 32 bytes...").toString("base64")}`;
const PREVIOUS = `whsec_${Buffer.from("the previous secret, 32 bytes..").toString("base64")}`;

let dir: string;
let serve: CliProcess | undefined;
let receiver: ReceiverProcess | undefined;

interface ReceiverProcess {
  readonly events: () => Record<string, unknown>[];
  readonly output: () => string;
  readonly stop: () => Promise<void>;
}

/** `node --import tsx examples/webhook-receiver/main.ts`, as its README runs it (npx tsx). */
function startReceiver(env: Record<string, string>): ReceiverProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "examples", "webhook-receiver", "main.ts")],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    output: () => output,
    events: () =>
      output
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "punctual-webhook-example-"));
});
afterAll(async () => {
  await receiver?.stop();
  if (serve !== undefined && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("examples/webhook-receiver", () => {
  it("verifies, answers 202, completes through completion_url, drops replays and refuses forgeries", async () => {
    const r = startReceiver({
      PORT: "0",
      WEBHOOK_SECRET: CURRENT,
      WEBHOOK_SECRET_PREVIOUS: PREVIOUS,
    });
    receiver = r;
    const hook = await waitFor(
      () =>
        r.events().find((event) => event["event"] === "listening")?.["url"] as string | undefined,
      { timeoutMs: 20_000, what: "the receiver to listen", describe: r.output },
    );

    const db = join(dir, "punctual.db");
    const token = await createToken(db, "example");
    const cli = startCli(["serve", "--database", db, "--port", "0"], {
      cwd: dir,
      env: { PUNCTUAL_WEBHOOK_SECRET: CURRENT, PUNCTUAL_WEBHOOK_ALLOW: "127.0.0.1" },
    });
    serve = cli;
    const baseUrl = await waitFor(
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1],
      {
        timeoutMs: 20_000,
        what: "punctual serve to listen",
        describe: cli.output,
      },
    );
    const client = new PunctualClient({ baseUrl, token });

    const { task } = await client.tasks.create({
      title: "daily export",
      schedule: {
        type: "once",
        run_at: new Date(Math.ceil(Date.now() / 1000 + 2) * 1000).toISOString(),
      },
      target: {
        kind: "webhook",
        url: hook,
        input: { report: "daily" },
        idempotent: true,
        signature: "standard_webhooks",
      },
    });
    const run = await waitFor(
      async () =>
        (await client.tasks.runs(task.id)).items.find((item) => item.status === "succeeded"),
      {
        timeoutMs: 20_000,
        what: "the run to succeed",
        describe: () => `${r.output()}\n${cli.output()}`,
      },
    );
    expect(run.result).toEqual({ report: { report: "daily" }, for: run.scheduled_for });
    const accepted = r.events().filter((event) => event["event"] === "accepted");
    expect(accepted).toEqual([
      { event: "accepted", key: run.idempotency_key, run: run.id, late: false },
    ]);

    // A request signed with the previous secret passes while rotating; its replay does no work twice.
    const body = JSON.stringify({
      task: { id: "t", title: "rotated" },
      run: { id: "r-rotated", attempt: 1 },
      occurrence: { scheduled_for: new Date().toISOString(), late: false },
      input: null,
    });
    const now = new Date();
    const headers = {
      "content-type": "application/json",
      "webhook-id": "rotated-key",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(PREVIOUS).sign("rotated-key", now, body),
    };
    for (let i = 0; i < 2; i++) {
      expect((await fetch(hook, { method: "POST", headers, body })).status).toBe(202);
    }
    await waitFor(() => r.events().some((event) => event["event"] === "duplicate") || undefined, {
      timeoutMs: 10_000,
      what: "the replay to be dropped",
      describe: r.output,
    });
    const forged = {
      ...headers,
      "webhook-signature": new Webhook(CURRENT).sign("rotated-key", now, `${body} `),
    };
    expect((await fetch(hook, { method: "POST", headers: forged, body })).status).toBe(401);
    expect((await fetch(hook, { method: "POST", body })).status).toBe(401);

    const byKey = (key: string) =>
      r.events().filter((event) => event["event"] === "accepted" && event["key"] === key);
    expect(byKey("rotated-key")).toHaveLength(1);
    expect(
      r
        .events()
        .filter((event) => event["event"] === "refused")
        .map((e) => e["reason"]),
    ).toEqual(["signature_mismatch", "missing_signature"]);
  });
});
