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
   * Whether a span started now goes anywhere: false while no tracer provider is registered, when every
   * span is a no-op. Callers on the hot path then take `NO_SPAN` without building attributes (a fire
   * would otherwise make two spans' attributes and span objects for nothing). Absent: always.
   */
  recording?(): boolean;
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

/** A span that records nothing. */
export const NO_SPAN: TraceSpan = Object.freeze({
  headers: Object.freeze({}),
  setAttributes: () => undefined,
  fail: () => undefined,
  end: () => undefined,
});

/** A tracer that records nothing. */
export const NO_TRACING: Tracer = Object.freeze({
  recording: () => false,
  startSpan: () => NO_SPAN,
});

/**
 * `tracer.startSpan` with its attributes made only when the span records (`Tracer.recording`); otherwise
 * `NO_SPAN`, at no cost.
 */
export function startSpanLazily(
  tracer: Tracer,
  name: string,
  attributes: () => TraceAttributes,
): TraceSpan {
  if (tracer.recording?.() === false) return NO_SPAN;
  return tracer.startSpan(name, attributes());
}
