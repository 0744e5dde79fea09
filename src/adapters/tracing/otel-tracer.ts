/**
 * The runtime's `Tracer` on `@opentelemetry/api` (docs/operations.md#tracing): punctual depends on the API
 * only. Spans go to the tracer provider the application registered (an OpenTelemetry SDK with the
 * exporter of its choice), or to the one passed in `tracerProvider`; with neither, the API hands out
 * non-recording spans and no trace context is sent to targets.
 */
import { SpanKind, SpanStatusCode, context, isSpanContextValid, trace } from "@opentelemetry/api";
import type { Link, Span, TracerProvider } from "@opentelemetry/api";
import type { TraceAttributes, TraceSpan, Tracer } from "../../application/events/tracing.js";

/** The instrumentation scope spans are reported under. */
export const TRACER_NAME = "punctual";

class OtelSpan implements TraceSpan {
  readonly span: Span;
  readonly headers: Readonly<Record<string, string>>;

  constructor(span: Span) {
    this.span = span;
    this.headers = traceHeaders(span);
  }

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributes);
  }

  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/** The W3C trace context of `span` (https://www.w3.org/TR/trace-context/), or nothing when not valid. */
function traceHeaders(span: Span): Record<string, string> {
  const ctx = span.spanContext();
  if (!isSpanContextValid(ctx)) return {};
  const flags = (ctx.traceFlags & 0xff).toString(16).padStart(2, "0");
  const headers: Record<string, string> = {
    traceparent: `00-${ctx.traceId}-${ctx.spanId}-${flags}`,
  };
  const state = ctx.traceState?.serialize();
  if (state !== undefined && state !== "") headers["tracestate"] = state;
  return headers;
}

/** The API's global proxy provider: a tracer behind it once an SDK is registered, else undefined. */
interface DelegatingProvider {
  getDelegateTracer(name: string, version?: string): unknown;
}

/** A `Tracer` reporting to `provider`, else to the globally registered provider. */
export function openTelemetryTracer(provider?: TracerProvider, version?: string): Tracer {
  const source = provider ?? trace.getTracerProvider();
  const tracer = source.getTracer(TRACER_NAME, version);
  // The global provider is a proxy that hands out no-op spans until an SDK registers behind it, which
  // an application may do after creating the scheduler: asked at each span until it has (then for good).
  const proxy = source as Partial<DelegatingProvider>;
  let registered = typeof proxy.getDelegateTracer !== "function";
  return {
    recording: () =>
      registered || (registered = proxy.getDelegateTracer?.(TRACER_NAME, version) !== undefined),
    startSpan: (name, attributes, relation) => {
      const parent = relation?.parent instanceof OtelSpan ? relation.parent.span : undefined;
      const links: Link[] = [];
      for (const linked of relation?.links ?? []) {
        if (linked instanceof OtelSpan) links.push({ context: linked.span.spanContext() });
      }
      const parentContext =
        parent === undefined ? context.active() : trace.setSpan(context.active(), parent);
      const span = tracer.startSpan(
        name,
        {
          attributes,
          links,
          kind: SpanKind.INTERNAL,
          ...(parent === undefined ? { root: true } : {}),
        },
        parentContext,
      );
      return new OtelSpan(span);
    },
  };
}
