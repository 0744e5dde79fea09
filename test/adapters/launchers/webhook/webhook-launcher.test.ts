/**
 * The webhook launcher against real local receivers (docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation, docs/security.md): the envelope, the headers and the
 * signature; how each answer is read; the timeout; SSRF refusals, pinning and redirects; cancel_url; and
 * reconciliation by re-sending only to idempotent receivers.
 */
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { HostResolver } from "../../../../src/adapters/launchers/webhook/address-guard.js";
import { WebhookLauncher } from "../../../../src/adapters/launchers/webhook/webhook-launcher.js";
import type { WebhookLauncherOptions } from "../../../../src/adapters/launchers/webhook/webhook-launcher.js";
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../../../src/domain/errors.js";
import type { LaunchedRun } from "../../../../src/domain/ports/run-launcher.js";
import type { Run } from "../../../../src/domain/run.js";
import type { WebhookTarget } from "../../../../src/domain/target.js";
import type { Task } from "../../../../src/domain/task.js";
import { receiverSecret } from "../../../../src/application/shapes/view-mappers.js";
import { buildRun, buildTask, claimed } from "../../../domain/builders.js";
import { hang, json, startReceiver, verifySignature } from "../../../helpers/webhook-receiver.js";
import type { Behaviour, Receiver } from "../../../helpers/webhook-receiver.js";

const SECRET = "task-secret";
let receiver: Receiver | null = null;

afterEach(async () => {
  await receiver?.close();
  receiver = null;
});

async function receive(routes: Record<string, Behaviour>): Promise<Receiver> {
  receiver = await startReceiver(routes);
  return receiver;
}

function webhookTask(url: string, target: Partial<WebhookTarget> = {}): Task {
  return buildTask({
    title: "nightly export",
    metadata: { team: "data" },
    webhookSecret: SECRET,
    target: {
      kind: "webhook",
      url,
      method: "POST",
      headers: {},
      input: { report: "daily" },
      cancelUrl: null,
      idempotent: false,
      ...target,
    },
  });
}

const run: Run = claimed(buildRun());

function launcher(options: WebhookLauncherOptions = {}): WebhookLauncher {
  return new WebhookLauncher({ allow: ["127.0.0.1"], requestTimeoutMs: 5000, ...options });
}

function launch(
  l: WebhookLauncher,
  task: Task,
  signal = new AbortController().signal,
): Promise<LaunchedRun> {
  return l.launch({ run, task, signal });
}

describe("WebhookLauncher.launch", () => {
  it("posts the envelope with the idempotency key, a valid signature and the target's headers", async () => {
    const r = await receive({ "/hook": json(200, { status: "succeeded", result: { rows: 3 } }) });
    const task = webhookTask(r.url("/hook"), {
      method: "PUT",
      headers: { "X-Team": "data", "Idempotency-Key": "forged", "Content-Type": "text/plain" },
    });
    const launched = await launch(launcher(), task);
    expect(launched).toEqual({
      targetRunId: run.id,
      threadId: run.threadId,
      completion: { status: "succeeded", result: { rows: 3 } },
    });
    const [request] = r.requests;
    expect(request?.method).toBe("PUT");
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "idempotency-key": run.idempotencyKey,
      "x-team": "data",
    });
    expect(JSON.parse(request!.body)).toEqual({
      task: { id: task.id, title: "nightly export", metadata: { team: "data" } },
      run: { id: run.id, trigger: "scheduled", attempt: 1 },
      occurrence: {
        scheduled_for: "2026-03-02T09:00:00Z",
        fire_at: "2026-03-02T09:00:00Z",
        late: false,
      },
      input: { report: "daily" },
    });
    const signature = request!.headers["punctual-signature"] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(signature, request!.body, SECRET)).toBe(true);
    expect(verifySignature(signature, request!.body, "another secret")).toBe(false);
    expect(verifySignature(signature, `${request!.body} `, SECRET)).toBe(false);
  });

  it("signs in the Standard Webhooks format when asked, verifiable by its reference library", async () => {
    const r = await receive({ "/hook": json(200) });
    await launch(launcher(), webhookTask(r.url("/hook"), { signature: "standard_webhooks" }));
    const [request] = r.requests;
    const headers = request!.headers as Record<string, string>;
    expect(headers["punctual-signature"]).toBeUndefined();
    expect(headers["webhook-id"]).toBe(run.idempotencyKey);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // The owner reads the secret in its whsec_ form, and hands it to the library as it is.
    const secret = receiverSecret(SECRET, "standard_webhooks");
    expect(secret).toMatch(/^whsec_/);
    expect(new Webhook(secret).verify(request!.body, headers)).toEqual(JSON.parse(request!.body));
    expect(() =>
      new Webhook(receiverSecret("other", "standard_webhooks")).verify(request!.body, headers),
    ).toThrow();
  });

  it("signs with the server's secret when one is configured, and adds completion_url when given", async () => {
    const r = await receive({ "/hook": json(202) });
    const l = launcher({
      secret: "server-secret",
      completionUrl: (x) => `https://punctual.test/v1/runs/${x.id}/complete?token=t`,
    });
    const launched = await launch(l, webhookTask(r.url("/hook")));
    expect(launched).toEqual({ targetRunId: run.id, threadId: run.threadId });
    const [request] = r.requests;
    expect(
      verifySignature(
        request!.headers["punctual-signature"] as string,
        request!.body,
        "server-secret",
      ),
    ).toBe(true);
    expect(JSON.parse(request!.body)).toMatchObject({
      completion_url: `https://punctual.test/v1/runs/${run.id}/complete?token=t`,
    });
  });

  it.each([
    ["an empty 200", json(200), { status: "succeeded" }],
    ["a 204", json(204), { status: "succeeded" }],
    [
      "a plain-text ok",
      ((_q, res) => {
        res.end("ok");
      }) satisfies Behaviour,
      { status: "succeeded" },
    ],
    [
      "a failure verdict",
      json(200, { status: "failed", error: "disk full" }),
      { status: "failed", error: "disk full" },
    ],
    ["a JSON object without status", json(201, { received: true }), { status: "succeeded" }],
  ] as const)("completes the run at once on %s", async (_name, behaviour, completion) => {
    const r = await receive({ "/hook": behaviour });
    const launched = await launch(launcher(), webhookTask(r.url("/hook")));
    expect(launched.completion).toEqual(completion);
  });

  it("leaves the run running on a 202", async () => {
    const r = await receive({ "/hook": json(202, { queued: true }) });
    const launched = await launch(launcher(), webhookTask(r.url("/hook")));
    expect(launched.completion).toBeUndefined();
    expect(launched.targetRunId).toBe(run.id);
  });

  it.each([
    [409, ThreadBusyError],
    [400, LaunchFailedError],
    [404, LaunchFailedError],
    [429, LaunchFailedError],
    [500, LaunchIndeterminateError],
    [503, LaunchIndeterminateError],
  ] as const)("maps a %i answer to %o", async (status, errorClass) => {
    const r = await receive({ "/hook": json(status, { error: "nope" }) });
    const failure = launch(launcher(), webhookTask(r.url("/hook")));
    await expect(failure).rejects.toBeInstanceOf(errorClass);
    await expect(failure).rejects.toThrow(`answered ${status}`);
    await expect(failure.catch((e: unknown) => (e as Error).cause)).resolves.toMatchObject({
      status,
    });
  });

  it("treats a 2xx with an unreadable body as uncertain", async () => {
    const r = await receive({
      "/bad-json": (_q, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{not json");
      },
      "/bad-status": json(200, { status: "done" }),
    });
    await expect(launch(launcher(), webhookTask(r.url("/bad-json")))).rejects.toBeInstanceOf(
      LaunchIndeterminateError,
    );
    await expect(launch(launcher(), webhookTask(r.url("/bad-status")))).rejects.toThrow(
      /unreadable/,
    );
  });

  it("does not follow a redirect, even to an address it would allow", async () => {
    const r = await receive({
      "/hook": (_q, res) => {
        res.writeHead(302, { location: "http://127.0.0.1/internal" });
        res.end();
      },
      "/internal": json(200),
    });
    const failure = launch(launcher(), webhookTask(r.url("/hook")));
    await expect(failure).rejects.toBeInstanceOf(LaunchFailedError);
    await expect(failure).rejects.toThrow(/redirects are not followed/);
    expect(r.requestsTo("/internal")).toHaveLength(0);
  });

  it("gives up after the request timeout, as uncertain, and closes the connection", async () => {
    const r = await receive({ "/hook": hang });
    const started = performance.now();
    const failure = launch(launcher({ requestTimeoutMs: 200 }), webhookTask(r.url("/hook")));
    await expect(failure).rejects.toBeInstanceOf(LaunchIndeterminateError);
    await expect(failure).rejects.toThrow(/did not answer within 200 ms/);
    expect(performance.now() - started).toBeLessThan(2000);
    await expect.poll(() => r.abandoned).toEqual(["/hook"]);
  });

  it("refuses a loopback receiver that is not allow-listed, naming SSRF, and sends nothing", async () => {
    const r = await receive({ "/hook": json(200) });
    const failure = launch(new WebhookLauncher(), webhookTask(r.url("/hook")));
    await expect(failure).rejects.toBeInstanceOf(LaunchFailedError);
    await expect(failure).rejects.toThrow(/SSRF/);
    const https = launch(new WebhookLauncher(), webhookTask(`https://127.0.0.1:${r.port}/hook`));
    await expect(https).rejects.toThrow(/127\.0\.0\.1, a loopback address/);
    expect(r.requests).toHaveLength(0);
  });

  it("refuses a host name whose resolution includes a private address", async () => {
    const resolve: HostResolver = () =>
      Promise.resolve([
        { address: "93.184.216.34", family: 4 },
        { address: "169.254.169.254", family: 4 },
      ]);
    const failure = launch(
      new WebhookLauncher({ resolve }),
      webhookTask("https://metadata.example/latest"),
    );
    await expect(failure).rejects.toThrow(/169\.254\.169\.254, a link-local address/);
  });

  it("connects to the address it checked, keeping the URL's host name in the Host header", async () => {
    const r = await receive({ "/hook": json(200) });
    const lookups: string[] = [];
    const resolve: HostResolver = (hostname) => {
      lookups.push(hostname);
      return Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    };
    const l = new WebhookLauncher({ allow: ["receiver.test"], resolve });
    await launch(l, webhookTask(`http://receiver.test:${r.port}/hook`));
    expect(lookups).toEqual(["receiver.test"]);
    expect(r.requests[0]?.headers.host).toBe(`receiver.test:${r.port}`);
  });

  it("fails without sending when the host does not resolve or nothing listens", async () => {
    const resolve: HostResolver = () => Promise.reject(new Error("ENOTFOUND"));
    const unresolved = launch(
      new WebhookLauncher({ resolve }),
      webhookTask("https://nowhere.example/"),
    );
    await expect(unresolved).rejects.toBeInstanceOf(LaunchFailedError);
    await expect(unresolved).rejects.toThrow(/could not resolve nowhere\.example/);
  });
});

describe("WebhookLauncher.cancel", () => {
  it("posts the signed envelope to cancel_url", async () => {
    const r = await receive({ "/cancel": json(200) });
    await launcher().cancel(run, webhookTask(r.url("/hook"), { cancelUrl: r.url("/cancel") }));
    const [request] = r.requestsTo("/cancel");
    expect(request?.method).toBe("POST");
    expect(request?.headers["idempotency-key"]).toBe(run.idempotencyKey);
    expect(
      verifySignature(request!.headers["punctual-signature"] as string, request!.body, SECRET),
    ).toBe(true);
    expect(JSON.parse(request!.body)).toMatchObject({ run: { id: run.id } });
  });

  it("does nothing without cancel_url, and never throws when the call fails", async () => {
    const r = await receive({ "/cancel": json(500) });
    await launcher().cancel(run, webhookTask(r.url("/hook")));
    expect(r.requests).toHaveLength(0);
    await expect(
      launcher().cancel(run, webhookTask(r.url("/hook"), { cancelUrl: r.url("/cancel") })),
    ).resolves.toBeUndefined();
    await expect(
      new WebhookLauncher().cancel(
        run,
        webhookTask(r.url("/hook"), { cancelUrl: r.url("/cancel") }),
      ),
    ).resolves.toBeUndefined();
  });
});

describe("WebhookLauncher.reconcile", () => {
  const signal = new AbortController().signal;

  it("never re-sends to a receiver not declared idempotent", async () => {
    const r = await receive({ "/hook": json(200) });
    await expect(launcher().reconcile(run, webhookTask(r.url("/hook")), signal)).resolves.toEqual({
      kind: "unknown",
    });
    expect(r.requests).toHaveLength(0);
  });

  it("re-sends to an idempotent receiver with the same key: found on 2xx, absent on 4xx, else unknown", async () => {
    const r = await receive({
      "/ok": json(200),
      "/accepted": json(202),
      "/gone": json(404),
      "/down": json(502),
    });
    const check = (path: string) =>
      launcher().reconcile(run, webhookTask(r.url(path), { idempotent: true }), signal);
    await expect(check("/ok")).resolves.toEqual({ kind: "found", targetRunId: run.id });
    await expect(check("/accepted")).resolves.toEqual({ kind: "found", targetRunId: run.id });
    await expect(check("/gone")).resolves.toEqual({ kind: "absent" });
    await expect(check("/down")).resolves.toEqual({ kind: "unknown" });
    expect(new Set(r.requests.map((q) => q.headers["idempotency-key"]))).toEqual(
      new Set([run.idempotencyKey]),
    );
  });
});
