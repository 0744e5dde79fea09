/**
 * A replica's wall-clock timeline (`--trace`, docs/benchmarks.md#profiling): each admission round and
 * claim (the library's own spans, through a recording `tracerProvider`), each SQL statement from send to
 * answer (node-postgres's `Client.prototype.query`, wrapped), and each handler start, stamped with the
 * wall time and this process's CPU. Written as JSON when the replica stops; `bench/trace-summary.ts`
 * reads it. Launch and verdict spans are not kept: they would weigh on the burst they measure.
 */
import { writeFileSync } from "node:fs";
import { INVALID_SPAN_CONTEXT } from "@opentelemetry/api";
import type { Span, SpanContext, Tracer, TracerProvider } from "@opentelemetry/api";
import pg from "pg";

/** One line of the timeline: `at` wall time (ms, fractional), `cpu` this process's CPU so far (ms). */
export interface TraceEntry {
  readonly at: number;
  readonly cpu: number;
  readonly kind: "span" | "span-end" | "sql" | "sql-end" | "start";
  readonly name: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

const KEPT_SPANS = new Set(["punctual.admission", "punctual.claim"]);

const entries: TraceEntry[] = [];

function note(kind: TraceEntry["kind"], name: string, attributes?: Record<string, unknown>): void {
  const cpu = process.cpuUsage();
  entries.push({
    at: performance.timeOrigin + performance.now(),
    cpu: (cpu.user + cpu.system) / 1000,
    kind,
    name,
    ...(attributes === undefined ? {} : { attributes }),
  });
}

/** A handler started (the bench's `noop`). */
export function noteStart(): void {
  note("start", "handler");
}

/** A span that records its start and end when its name is kept, and is a no-op otherwise. */
function recordingSpan(name: string, attributes: Record<string, unknown>): Span {
  const kept = KEPT_SPANS.has(name);
  if (kept) note("span", name, attributes);
  const ends: Record<string, unknown> = {};
  const span: Span = {
    spanContext: (): SpanContext => INVALID_SPAN_CONTEXT,
    setAttribute: (key, value) => {
      ends[key] = value;
      return span;
    },
    setAttributes: (values) => {
      Object.assign(ends, values);
      return span;
    },
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus: () => span,
    updateName: () => span,
    end: () => {
      if (kept) note("span-end", name, ends);
    },
    isRecording: () => kept,
    recordException: () => undefined,
  };
  return span;
}

/** The `tracerProvider` a traced replica is created with. */
export function recordingTracerProvider(): TracerProvider {
  const tracer: Tracer = {
    startSpan: (name, options) => recordingSpan(name, { ...options?.attributes }),
    startActiveSpan: () => {
      throw new Error("the bench's recording tracer starts no active span");
    },
  };
  return { getTracer: () => tracer };
}

function statementName(query: unknown): string {
  const text =
    typeof query === "string"
      ? query
      : typeof query === "object" && query !== null && "text" in query
        ? String(query.text)
        : "?";
  return text.replace(/\s+/g, " ").slice(0, 60);
}

/** Wraps `pg.Client.prototype.query` (once) to note each statement's send and answer. */
export function traceStatements(): void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]): unknown {
    const name = statementName(args[0]);
    note("sql", name);
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      return result.finally(() => {
        note("sql-end", name);
      });
    }
    return result;
  };
}

/** Writes the timeline to `file`. */
export function writeTrace(file: string): void {
  writeFileSync(file, JSON.stringify(entries));
}
