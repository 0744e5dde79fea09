/**
 * The real process around the long-running commands (`serve`, `worker`): environment, output, a pino
 * logger (pretty on a terminal), SIGTERM/SIGINT listening, and dying by a signal. Tests inject their own.
 */
import { pino } from "pino";
import type { Logger as PinoLogger } from "pino";
import PinoPretty from "pino-pretty";

export interface ProcessIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Builds the logger (pino, pretty on a terminal). */
  readonly logger: (level: string) => PinoLogger;
  /** Calls `listener` on SIGTERM and SIGINT; returns a function that stops listening. */
  readonly onSignal: (listener: (signal: NodeJS.Signals) => void) => () => void;
  /** Ends the process at once with `signal` (the second signal), after listeners are removed. */
  readonly die: (signal: NodeJS.Signals) => void;
}

const SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

export const processIo: ProcessIo = {
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  logger: (level) =>
    process.stdout.isTTY
      ? pino({ level }, PinoPretty({ colorize: true, translateTime: "SYS:standard" }))
      : pino({ level }),
  onSignal: (listener) => {
    for (const signal of SIGNALS) process.on(signal, listener);
    return () => {
      for (const signal of SIGNALS) process.off(signal, listener);
    };
  },
  die: (signal) => {
    // Re-raised with the default action: the process ends as killed by the signal (exit 128 + n).
    process.kill(process.pid, signal);
  },
};

/**
 * Waits for the first SIGTERM/SIGINT (graceful stop); a second one logs and ends the process at once.
 * Listeners are removed before the re-raise, so the default action ends the process instead of the
 * signal coming back to this listener. `stop()` stops listening once the command is done.
 */
export function stopSignals(
  io: ProcessIo,
  logger: Pick<PinoLogger, "warn" | "flush">,
): { readonly signalled: Promise<NodeJS.Signals>; readonly stop: () => void } {
  let first: (signal: NodeJS.Signals) => void = () => undefined;
  const signalled = new Promise<NodeJS.Signals>((resolve) => (first = resolve));
  let stopping = false;
  const stop = io.onSignal((signal) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting at once");
      logger.flush();
      stop();
      io.die(signal);
      return;
    }
    stopping = true;
    first(signal);
  });
  return { signalled, stop };
}
