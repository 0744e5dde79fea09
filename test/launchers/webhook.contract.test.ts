/**
 * The launcher contract for `webhook` targets, against a real receiver on 127.0.0.1 (allow-listed). A
 * webhook always answers for the requested thread, so `other_thread` is not registered for it.
 */
import { WebhookLauncher } from "../../src/adapters/launchers/webhook/webhook-launcher.js";
import type { WebhookTarget } from "../../src/domain/target.js";
import { buildRun, buildTask, claimed } from "../domain/builders.js";
import { closedPort, drop, hang, json, startReceiver } from "../helpers/webhook-receiver.js";
import { describeLauncherContract } from "./launcher-contract.js";
import type { ContractRequest } from "./launcher-contract.js";

function webhookRequest(url: string): ContractRequest {
  const run = claimed(buildRun());
  const target: WebhookTarget = {
    kind: "webhook",
    url,
    method: "POST",
    headers: {},
    input: { n: 1 },
    cancelUrl: null,
    idempotent: false,
  };
  return { run, task: buildTask({ target }), targetRunId: run.id };
}

describeLauncherContract(
  "webhook",
  ["succeeds", "busy", "refused", "uncertain", "unreachable", "hangs"],
  async () => {
    const receiver = await startReceiver({
      "/ok": json(200, { status: "succeeded" }),
      "/busy": json(409, { error: "thread busy" }),
      "/refuse": json(400, { error: "bad input" }),
      "/drop": drop,
      "/hang": hang,
    });
    const deadPort = await closedPort();
    const launcher = new WebhookLauncher({ allow: ["127.0.0.1"], requestTimeoutMs: 5000 });
    return {
      launcher,
      request: (scenario) => {
        switch (scenario) {
          case "succeeds":
            return webhookRequest(receiver.url("/ok"));
          case "busy":
            return webhookRequest(receiver.url("/busy"));
          case "refused":
            return webhookRequest(receiver.url("/refuse"));
          case "uncertain":
            return webhookRequest(receiver.url("/drop"));
          case "unreachable":
            return webhookRequest(`http://127.0.0.1:${deadPort}/nobody`);
          case "hangs":
            return webhookRequest(receiver.url("/hang"));
          case "other_thread":
            return null;
        }
      },
      close: () => receiver.close(),
    };
  },
);
