import { describe, expect, it } from "vitest";
import { LazyAbort } from "../../src/application/dispatch/lazy-abort.js";

describe("LazyAbort", () => {
  it("is not aborted until aborted, and its signal is live", () => {
    const abort = new LazyAbort();
    expect(abort.aborted).toBe(false);
    expect(abort.reason).toBeUndefined();
    const signal = abort.signal;
    expect(signal.aborted).toBe(false);
    abort.abort("cancelled");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("cancelled");
    expect(abort.signal).toBe(signal);
  });

  it("hands out an already aborted signal when first read after the abort", () => {
    const abort = new LazyAbort();
    abort.abort("replica shutting down");
    expect(abort.aborted).toBe(true);
    expect(abort.reason).toBe("replica shutting down");
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe("replica shutting down");
  });

  it("keeps the first abort's reason", () => {
    const abort = new LazyAbort();
    const signal = abort.signal;
    abort.abort("first");
    abort.abort("second");
    expect(abort.reason).toBe("first");
    expect(signal.reason).toBe("first");
  });
});
