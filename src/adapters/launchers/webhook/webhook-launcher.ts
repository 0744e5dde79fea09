/**
 * The `webhook` target (docs/semantics.md#tasks, docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation, docs/security.md): one signed HTTP request per launch, sent only to a
 * destination the SSRF guard accepted and pinned to the address it checked, with a timeout. Only the
 * three launch errors escape `launch`; `cancel` never throws; `reconcile` re-sends only to idempotent
 * receivers, with the same `Idempotency-Key`.
 */
import type { Logger } from "../../../application/events/logger.js";
import { silentLogger } from "../../../application/events/logger.js";
import type { AbortSignalLike } from "../../../domain/abort.js";
import { LaunchFailedError } from "../../../domain/errors.js";
import type {
  LaunchedRun,
  LaunchRequest,
  RunLauncher,
} from "../../../domain/ports/run-launcher.js";
import type { Run } from "../../../domain/run.js";
import type { ReconcileFinding } from "../../../domain/run-change.js";
import type { WebhookTarget } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import { validSecrets } from "../../../domain/task-secret.js";
import { instant } from "../../../domain/time.js";
import type { HostResolver, ResolvedAddress } from "./address-guard.js";
import { AddressGuard, SsrfRefusal, UnresolvedHost } from "./address-guard.js";
import type { HttpReply } from "./pinned-request.js";
import { sendPinned } from "./pinned-request.js";
import { signatureHeaders, webhookEnvelope, webhookHeaders } from "./webhook-envelope.js";
import { interpretReply, WebhookReplyError } from "./webhook-reply.js";
import { launchContractError } from "../launch-contract.js";
import { launchErrorOfTransport, TransportError } from "../transport-error.js";

export interface WebhookLauncherOptions {
  /**
   * Host names or IP addresses that may be called over plain `http` and at loopback, private or
   * link-local addresses (`PUNCTUAL_WEBHOOK_ALLOW`). @default []
   */
  readonly allow?: readonly string[];
  /** Signs every request with this secret instead of each task's own. @default the task's secret */
  readonly secret?: string;
  /** How long one request may take, connection to last byte. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** The `completion_url` put in the envelope (with its per-run token); left out when absent or null. */
  readonly completionUrl?: (run: Run, task: Task) => string | null;
  /** Resolves host names to every address. @default `dns.lookup` with `all: true` */
  readonly resolve?: HostResolver;
  /** The wall clock the signature's timestamp is read from (ms). @default Date.now */
  readonly now?: () => number;
  readonly logger?: Logger;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A reply larger than this is not read (a result is at most 64 KiB; room for an error and framing). */
const MAX_REPLY_BYTES = 1024 * 1024;
const NEVER_ABORTED: AbortSignalLike = new AbortController().signal;

interface Exchange {
  readonly url: string;
  readonly method: string;
  readonly target: WebhookTarget;
  readonly run: Run;
  readonly task: Task;
  readonly body: string;
  readonly signal: AbortSignalLike;
  /** The launch span's `traceparent`/`tracestate` (docs/operations.md#tracing): sent as headers. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

export class WebhookLauncher implements RunLauncher {
  readonly #guard: AddressGuard;
  readonly #secret: string | undefined;
  readonly #timeoutMs: number;
  readonly #completionUrl: (run: Run, task: Task) => string | null;
  readonly #now: () => number;
  readonly #log: Logger;

  constructor(options: WebhookLauncherOptions = {}) {
    this.#guard = new AddressGuard(options.allow ?? [], options.resolve);
    this.#secret = options.secret;
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#completionUrl = options.completionUrl ?? (() => null);
    this.#now = options.now ?? Date.now;
    this.#log = options.logger ?? silentLogger;
  }

  async launch({ run, task, signal, traceHeaders }: LaunchRequest): Promise<LaunchedRun> {
    try {
      const target = webhookTargetOf(task);
      if (signal.aborted) {
        throw new LaunchFailedError("the launch was aborted before the webhook was called", {
          cause: signal.reason,
        });
      }
      const body = JSON.stringify(
        webhookEnvelope(run, task, target, this.#completionUrl(run, task)),
      );
      const reply = await this.#send({
        url: target.url,
        method: target.method,
        target,
        run,
        task,
        body,
        signal,
        ...(traceHeaders === undefined ? {} : { traceHeaders }),
      });
      return interpretReply(reply, run);
    } catch (error) {
      throw launchContractError(error, "webhook");
    }
  }

  /** Posts the envelope to `cancel_url`, if the target has one; failures are logged, never thrown. */
  async cancel(run: Run, task: Task): Promise<void> {
    if (task.target.kind !== "webhook" || task.target.cancelUrl === null) return;
    const target = task.target;
    try {
      const body = JSON.stringify(webhookEnvelope(run, task, target, null));
      const url = target.cancelUrl ?? target.url;
      const reply = await this.#send({
        url,
        method: "POST",
        target,
        run,
        task,
        body,
        signal: NEVER_ABORTED,
      });
      if (reply.status < 200 || reply.status >= 300) {
        this.#log.warn(
          { runId: run.id, status: reply.status },
          "the webhook's cancel_url refused the cancellation",
        );
      }
    } catch (error) {
      this.#log.warn({ err: error, runId: run.id }, "could not call the webhook's cancel_url");
    }
  }

  /**
   * docs/semantics.md#launch: an uncertain launch is re-sent, with the same `Idempotency-Key`, only to a receiver
   * declared `idempotent`: found on 2xx, absent on 4xx, unknown otherwise.
   */
  async reconcile(run: Run, task: Task, signal: AbortSignalLike): Promise<ReconcileFinding> {
    if (task.target.kind !== "webhook" || !task.target.idempotent) return { kind: "unknown" };
    try {
      const launched = await this.launch({ run, task, signal });
      return { kind: "found", targetRunId: launched.targetRunId };
    } catch (error) {
      const cause = error instanceof Error ? error.cause : undefined;
      if (
        error instanceof LaunchFailedError &&
        cause instanceof WebhookReplyError &&
        cause.status >= 400 &&
        cause.status < 500
      ) {
        return { kind: "absent" };
      }
      this.#log.warn({ err: error, runId: run.id }, "could not reconcile a webhook launch");
      return { kind: "unknown" };
    }
  }

  /**
   * One exchange, checked and pinned, within the request timeout and the caller's signal.
   * @throws LaunchFailedError when nothing reached the receiver, LaunchIndeterminateError when it may have
   */
  async #send(exchange: Exchange): Promise<HttpReply> {
    const url = parseUrl(exchange.url);
    const controller = new AbortController();
    const onAbort = (): void => {
      controller.abort(exchange.signal.reason);
    };
    exchange.signal.addEventListener("abort", onAbort, { once: true });
    if (exchange.signal.aborted) onAbort();
    const timer = setTimeout(() => {
      controller.abort(new Error(`the webhook did not answer within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
    try {
      const address = await abortable(this.#guard.check(url), controller.signal);
      const secret = this.#secret ?? validSecrets(exchange.task, instant(Math.floor(this.#now())));
      const headers = webhookHeaders(exchange.target, {
        idempotencyKey: exchange.run.idempotencyKey,
        signature: signatureHeaders(exchange.target.signature ?? "punctual", secret, {
          idempotencyKey: exchange.run.idempotencyKey,
          body: exchange.body,
          nowMs: this.#now(),
        }),
      });
      return await sendPinned({
        url,
        method: exchange.method,
        // The trace context continues the launch's trace in the receiver (a target's own header loses).
        headers: { ...headers, ...exchange.traceHeaders },
        body: exchange.body,
        address,
        signal: controller.signal,
        maxReplyBytes: MAX_REPLY_BYTES,
      });
    } catch (error) {
      throw classify(error, url);
    } finally {
      clearTimeout(timer);
      exchange.signal.removeEventListener("abort", onAbort);
    }
  }
}

function webhookTargetOf(task: Task): WebhookTarget {
  if (task.target.kind !== "webhook") {
    throw new LaunchFailedError(`a ${task.target.kind} task is not a webhook task`);
  }
  return task.target;
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch (error) {
    throw new LaunchFailedError(`the webhook URL is not a valid URL: ${text}`, { cause: error });
  }
}

/** Waits for `promise`, or gives up (as a failure before connecting) when `signal` aborts. */
function abortable(
  promise: Promise<ResolvedAddress>,
  signal: AbortSignal,
): Promise<ResolvedAddress> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      const reason: unknown = signal.reason;
      const message = reason instanceof Error ? reason.message : String(reason);
      reject(new TransportError(`gave up before connecting: ${message}`, false, { cause: reason }));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => {
      signal.removeEventListener("abort", onAbort);
    });
  });
}

/** Foreign errors of one exchange as launch errors, by whether the receiver may have seen the request. */
function classify(error: unknown, url: URL): unknown {
  if (error instanceof SsrfRefusal || error instanceof UnresolvedHost) {
    return new LaunchFailedError(error.message, { cause: error });
  }
  return launchErrorOfTransport(error, url.origin);
}
