/**
 * `punctual serve` and `worker` read the webhook settings from the environment (SPEC 8):
 * `PUNCTUAL_WEBHOOK_ALLOW` and `PUNCTUAL_WEBHOOK_SECRET`.
 */
import { describe, expect, it } from "vitest";
import { webhookOptionsOf } from "../../../src/adapters/cli/worker-command.js";

describe("webhookOptionsOf", () => {
  it("reads the allow list and the signing secret", () => {
    expect(
      webhookOptionsOf({
        PUNCTUAL_WEBHOOK_ALLOW: "127.0.0.1, hooks.internal",
        PUNCTUAL_WEBHOOK_SECRET: "s",
      }),
    ).toEqual({ webhookAllow: ["127.0.0.1", "hooks.internal"], webhookSecret: "s" });
  });

  it("allows nothing and signs with each task's secret when unset", () => {
    expect(webhookOptionsOf({})).toEqual({ webhookAllow: [] });
    expect(webhookOptionsOf({ PUNCTUAL_WEBHOOK_SECRET: "" })).toEqual({ webhookAllow: [] });
  });
});
