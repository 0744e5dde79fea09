/**
 * `serve` and `worker` stop on the first SIGTERM/SIGINT and die on the second. Before dying they stop
 * listening: the re-raised signal must take its default action, not come back to their own listener
 * (which would re-raise it again and never exit).
 */
import { describe, expect, it } from "vitest";
import { stopSignals } from "../../src/cli/process-io.js";
import type { ProcessIo } from "../../src/cli/process-io.js";

function fakeIo() {
  const listeners = new Set<(signal: NodeJS.Signals) => void>();
  const events: string[] = [];
  const io = {
    onSignal: (listener: (signal: NodeJS.Signals) => void) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    die: (signal: NodeJS.Signals) => {
      events.push(`die ${signal} with ${listeners.size} listener(s)`);
      // What a re-raised signal does: every listener still attached hears it.
      for (const listener of [...listeners]) listener(signal);
    },
  } as unknown as ProcessIo;
  const send = (signal: NodeJS.Signals) => {
    for (const listener of [...listeners]) listener(signal);
  };
  return { io, send, events, listeners };
}

const quietLogger = { warn: () => undefined, flush: () => undefined };

describe("stopSignals", () => {
  it("resolves on the first signal and dies, unheard, on the second", async () => {
    const { io, send, events, listeners } = fakeIo();
    const { signalled } = stopSignals(io, quietLogger);
    send("SIGTERM");
    await expect(signalled).resolves.toBe("SIGTERM");
    expect(events).toEqual([]);
    send("SIGINT");
    expect(events).toEqual(["die SIGINT with 0 listener(s)"]);
    expect(listeners.size).toBe(0);
  });

  it("stops listening when the command is done", () => {
    const { io, listeners } = fakeIo();
    const { stop } = stopSignals(io, quietLogger);
    expect(listeners.size).toBe(1);
    stop();
    expect(listeners.size).toBe(0);
  });
});
