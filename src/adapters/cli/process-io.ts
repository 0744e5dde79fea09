/**
 * The real process around the long-running commands (`serve`, `worker`): environment, output, a pino
 * logger (pretty on a terminal), SIGTERM/SIGINT listening, dying by a signal, and the lifecycle both
 * commands run (`runUntilSignal`). Tests inject their own process.
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

/** A long-running command's part in `runUntilSignal`. */
export interface UntilSignal<T> {
  readonly io: ProcessIo;
  readonly logger: Pick<PinoLogger, "info" | "warn" | "flush">;
  /** Starts the work; what it resolves with goes to `started`. */
  readonly start: () => Promise<T>;
  /** Runs once started (logs, first-run messages). */
  readonly started: (value: T) => Promise<void> | void;
  /** Stops gracefully; also called, its failure ignored, when starting or `started` failed. */
  readonly stop: () => Promise<void>;
  /** Logged with the signal when the first one arrives. */
  readonly stopping: string;
  /** Logged once stopped. */
  readonly stopped: string;
}

/**
 * Starts, runs until the first SIGTERM/SIGINT, then stops gracefully and resolves with exit code 0; a
 * second signal ends the process at once (`stopSignals`). A failure to start stops what did start and
 * rejects.
 */
export async function runUntilSignal<T>(run: UntilSignal<T>): Promise<number> {
  const { logger } = run;
  const { signalled, stop: stopListening } = stopSignals(run.io, logger);
  try {
    await run.started(await run.start());
    const signal = await signalled;
    logger.info({ signal }, run.stopping);
    await run.stop();
    logger.info({}, run.stopped);
    logger.flush();
    return 0;
  } catch (error) {
    await run.stop().catch(() => undefined);
    throw error;
  } finally {
    stopListening();
  }
}
