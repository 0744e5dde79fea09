/**
 * verifyWebhook, the receiver's check (docs/targets.md#verifying-a-signature): both formats as the launcher
 * signs them, either of two secrets, the timestamp tolerance both ways, and each refusal with its reason.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  signatureHeaders,
  standardWebhooksSignature,
} from "../../../../src/adapters/launchers/webhook/webhook-envelope.js";
import {
  verifyWebhook,
  WebhookVerificationError,
} from "../../../../src/adapters/launchers/webhook/verify-webhook.js";
import type { WebhookRejection } from "../../../../src/adapters/launchers/webhook/verify-webhook.js";
import { receiverSecret } from "../../../../src/application/shapes/view-mappers.js";

const SECRET = "pct_current";
const PREVIOUS = "pct_previous";
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const BODY = JSON.stringify({ run: { id: "r1" }, input: { é: "ü" } });
const KEY = "punctual:t1:scheduled:1767571260000";

function signed(format: "punctual" | "standard_webhooks", secret = SECRET, nowMs = NOW) {
  return {
    headers: {
      "Idempotency-Key": KEY,
      ...signatureHeaders(format, secret, { idempotencyKey: KEY, body: BODY, nowMs }),
    },
    body: BODY,
  };
}

function refusal(run: () => unknown): WebhookRejection {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error("verifyWebhook accepted the request");
}

describe("verifyWebhook", () => {
  it("accepts punctual's signature, with the Idempotency-Key and the signed time", () => {
    expect(verifyWebhook(signed("punctual"), SECRET, { now: NOW })).toEqual({
      format: "punctual",
      signedAt: new Date(NOW),
      idempotencyKey: KEY,
      secretIndex: 0,
    });
  });

  it("accepts the Standard Webhooks signature under the stored secret or its whsec_ form", () => {
    const request = signed("standard_webhooks");
    for (const secret of [SECRET, receiverSecret(SECRET, "standard_webhooks")]) {
      expect(verifyWebhook(request, secret, { now: NOW })).toMatchObject({
        format: "standard_webhooks",
        idempotencyKey: KEY,
      });
    }
  });

  it("accepts what the Standard Webhooks reference library signs", () => {
    const secret = receiverSecret(SECRET, "standard_webhooks");
    const signature = new Webhook(secret).sign(KEY, new Date(NOW), BODY);
    expect(signature).toBe(
      standardWebhooksSignature(SECRET, { id: KEY, timestamp: NOW / 1000, body: BODY }),
    );
    const headers = {
      "webhook-id": KEY,
      "webhook-timestamp": String(NOW / 1000),
      "webhook-signature": signature,
    };
    expect(verifyWebhook({ headers, body: Buffer.from(BODY) }, secret, { now: NOW }).format).toBe(
      "standard_webhooks",
    );
  });

  it("accepts either of two secrets while the sender rotates, and says which matched", () => {
    expect(
      verifyWebhook(signed("punctual", PREVIOUS), [SECRET, PREVIOUS], { now: NOW }).secretIndex,
    ).toBe(1);
    expect(
      verifyWebhook(signed("standard_webhooks", SECRET), [SECRET, PREVIOUS], { now: NOW })
        .secretIndex,
    ).toBe(0);
    expect(
      refusal(() =>
        verifyWebhook(signed("punctual", "pct_other"), [SECRET, PREVIOUS], { now: NOW }),
      ),
    ).toBe("signature_mismatch");
  });

  it("refuses a timestamp outside the tolerance, in the past or the future", () => {
    for (const format of ["punctual", "standard_webhooks"] as const) {
      const old = signed(format, SECRET, NOW - 301_000);
      expect(refusal(() => verifyWebhook(old, SECRET, { now: NOW }))).toBe(
        "timestamp_outside_tolerance",
      );
      expect(verifyWebhook(old, SECRET, { now: NOW, tolerance: 600 }).format).toBe(format);
      const ahead = signed(format, SECRET, NOW + 301_000);
      expect(refusal(() => verifyWebhook(ahead, SECRET, { now: NOW }))).toBe(
        "timestamp_outside_tolerance",
      );
    }
  });

  it("refuses a changed body, a changed webhook-id, and a missing or malformed signature", () => {
    const punctual = signed("punctual");
    expect(
      refusal(() => verifyWebhook({ ...punctual, body: `${BODY} ` }, SECRET, { now: NOW })),
    ).toBe("signature_mismatch");
    const standard = signed("standard_webhooks");
    const otherId = { ...standard, headers: { ...standard.headers, "webhook-id": "another" } };
    expect(refusal(() => verifyWebhook(otherId, SECRET, { now: NOW }))).toBe("signature_mismatch");
    expect(refusal(() => verifyWebhook({ headers: {}, body: BODY }, SECRET, { now: NOW }))).toBe(
      "missing_signature",
    );
    const garbled = { headers: { "punctual-signature": "t=abc,v1=zz" }, body: BODY };
    expect(refusal(() => verifyWebhook(garbled, SECRET, { now: NOW }))).toBe("malformed_signature");
    expect(
      refusal(() => verifyWebhook(punctual, SECRET, { now: NOW, format: "standard_webhooks" })),
    ).toBe("missing_signature");
  });

  it("reads fetch Headers as well as node's header records", () => {
    const { headers, body } = signed("punctual");
    expect(
      verifyWebhook({ headers: new Headers(headers), body }, SECRET, { now: NOW }).idempotencyKey,
    ).toBe(KEY);
  });
});
