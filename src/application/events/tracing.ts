/**
 * Tracing as the runtime sees it (docs/operations.md#tracing): spans it starts and ends around admission
 * batches, claims, launches and completions, and the W3C trace context headers of a span, which launchers
 * send to the target so a user's trace continues there. The OpenTelemetry adapter implements it
 * (adapters/tracing/otel-tracer.ts); without a registered OpenTelemetry SDK every span is a no-op and
 * carries no headers.
 */

/** Span attributes: bounded values only (ids, kinds, counts), never inputs or results. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

export interface TraceSpan {
  /** `traceparent` (and `tracestate`) of this span; empty when it is not recorded. */
  readonly headers: Readonly<Record<string, string>>;
  /** Adds attributes known only later (the outcome). */
  setAttributes(attributes: TraceAttributes): void;
  /** Marks the span failed with `message`. */
  fail(message: string): void;
  end(): void;
}

export interface Tracer {
  /**
   * Starts a span: a child of `parent` when given (else a root), linked to each of `links` (a launch
   * links to the claim that took it, which served many runs).
   */
  startSpan(
    name: string,
    attributes: TraceAttributes,
    relation?: { readonly parent?: TraceSpan; readonly links?: readonly TraceSpan[] },
  ): TraceSpan;
}

const NO_SPAN: TraceSpan = Object.freeze({
  headers: Object.freeze({}),
  setAttributes: () => undefined,
  fail: () => undefined,
  end: () => undefined,
});

/** A tracer that records nothing. */
export const NO_TRACING: Tracer = Object.freeze({ startSpan: () => NO_SPAN });
