/** Runs one step of the coordinator inside a span (docs/operations.md#tracing): its outcome as attributes, a failure as the span's status. */
import { NO_SPAN } from "../application/events/tracing.js";
import type { TraceAttributes, TraceSpan } from "../application/events/tracing.js";

/** Awaits `work`, records `outcome(value)` on `span` (or the failure), and ends the span either way. */
export async function inSpan<T>(
  span: TraceSpan,
  work: () => Promise<T>,
  outcome: (value: T) => TraceAttributes,
): Promise<T> {
  try {
    const value = await work();
    if (span !== NO_SPAN) span.setAttributes(outcome(value));
    return value;
  } catch (error) {
    span.fail(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    span.end();
  }
}
