/**
 * A webhook receiver for punctual on plain node:http: it verifies the signature over the raw body,
 * drops duplicates by idempotency key, answers 202 at once, does the work, then reports the verdict
 * to the run's `completion_url`. It never trusts a body before its signature holds.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "punctual";

/** What punctual posts (docs/targets.md#the-request); only the fields this receiver reads. */
export interface Envelope {
  readonly task: { readonly id: string; readonly title: string };
  readonly run: { readonly id: string; readonly attempt: number };
  readonly occurrence: { readonly scheduled_for: string; readonly late: boolean };
  readonly input: unknown;
  readonly completion_url?: string;
}

/** The verdict reported through `completion_url`. */
export type Verdict =
  | { readonly status: "succeeded"; readonly result?: unknown }
  | { readonly status: "failed"; readonly error: string };

/**
 * Remembers idempotency keys. This one is in memory, so it forgets on restart: a production receiver
 * keeps the keys where its work's effects are written (a unique column, in the same transaction).
 */
export class SeenKeys {
  readonly #entries = new Map<string, Verdict | "working">();

  /** Records `key` as being worked on; false when it was seen before. */
  claim(key: string): boolean {
    if (this.#entries.has(key)) return false;
    this.#entries.set(key, "working");
    return true;
  }

  finish(key: string, verdict: Verdict): void {
    this.#entries.set(key, verdict);
  }

  /** The verdict of a finished key, else undefined (unknown or still working). */
  verdictOf(key: string): Verdict | undefined {
    const entry = this.#entries.get(key);
    return entry === "working" ? undefined : entry;
  }
}

export interface ReceiverOptions {
  /** The current secret first, then the previous one while punctual's operator rotates. */
  readonly secrets: readonly string[];
  /** The work of one run. Its resolution is the verdict; a throw reports `failed`. */
  readonly work: (envelope: Envelope) => Promise<unknown>;
  readonly seen?: SeenKeys;
  /** One line per event, as JSON. @default console.log */
  readonly log?: (event: Record<string, unknown>) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createReceiver(options: ReceiverOptions): Server {
  const seen = options.seen ?? new SeenKeys();
  const log =
    options.log ??
    ((event: Record<string, unknown>) => {
      console.log(JSON.stringify(event));
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    if (body === null) {
      res.writeHead(413).end();
      return;
    }
    let key: string | null;
    try {
      key = verifyWebhook({ headers: req.headers, body }, options.secrets).idempotencyKey;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      log({ event: "refused", reason: error.reason });
      res.writeHead(401).end();
      return;
    }
    const envelope = JSON.parse(body.toString("utf8")) as Envelope;
    key ??= `run:${envelope.run.id}`;
    res.writeHead(202).end();
    if (!seen.claim(key)) {
      log({ event: "duplicate", key });
      // Done before: tell punctual again (its first verdict wins); still working: that work will tell it.
      const verdict = seen.verdictOf(key);
      if (verdict !== undefined) await report(envelope, verdict, log);
      return;
    }
    log({ event: "accepted", key, run: envelope.run.id, late: envelope.occurrence.late });
    const verdict = await options.work(envelope).then(
      (result): Verdict => ({ status: "succeeded", result }),
      (error: unknown): Verdict => ({ status: "failed", error: String(error) }),
    );
    seen.finish(key, verdict);
    log({ event: "worked", key, status: verdict.status });
    await report(envelope, verdict, log);
  };

  return createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log({ event: "error", error: String(error) });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
}

/** The raw body, or null past the limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Posts the verdict to `completion_url`, a few times if punctual cannot be reached. */
async function report(
  envelope: Envelope,
  verdict: Verdict,
  log: (event: Record<string, unknown>) => void,
): Promise<void> {
  const url = envelope.completion_url;
  if (url === undefined) {
    log({ event: "no_completion_url", run: envelope.run.id });
    return;
  }
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(verdict),
      });
      // 200 whether or not it was the first verdict; 404 is a wrong token or an unknown run: final.
      log({ event: "completed", run: envelope.run.id, http: response.status });
      return;
    } catch (error) {
      log({ event: "completion_retry", run: envelope.run.id, attempt, error: String(error) });
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }
}
