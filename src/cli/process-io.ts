/**
 * The real process around the long-running commands (`serve`, `worker`): environment, output, a pino
 * logger (pretty on a terminal), SIGTERM/SIGINT listening, dying by a signal, and the lifecycle both
 * commands run (`runUntilSignal`). Tests inject their own process.
 */
import { createRequire } from "node:module";
import { pino } from "pino";
import type { Logger as PinoLogger } from "pino";
import type PinoPretty from "pino-pretty";
import type { SonicBoom } from "sonic-boom";
import { takeEarlySignals } from "./early-signals.js";

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
  /**
   * Writes what the logger still holds, giving up after `ms` (a reader that stopped reading must not
   * keep the process from exiting). Absent: nothing to wait for.
   */
  readonly drainLog?: (ms: number) => Promise<void>;
}

const SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/** pino-pretty is loaded only on a terminal: a worker under a supervisor never pays for it. */
function prettyLogger(level: string): PinoLogger {
  const require = createRequire(import.meta.url);
  const pretty = require("pino-pretty") as typeof PinoPretty;
  return pino({ level }, pretty({ colorize: true, translateTime: "SYS:standard" }));
}

/** The most log text held in memory while stdout does not take it; past it, lines are dropped. */
const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The JSON log's destination on stdout (docs/operations.md#what-happens-on-shutdown): written
 * asynchronously as pino's own is, but it never blocks the process. pino's default destination
 * flushes synchronously when the process exits, retrying for as long as the pipe is full: a worker
 * whose reader stopped reading (its parent stuck or gone while another process holds the pipe) hung in
 * that loop after its first SIGTERM, for as long as nobody read. Here the last lines get a bounded
 * wait (`drain`), a reader that went away (EPIPE) ends the logging quietly, and a reader that does not
 * read makes the log drop lines past 16 MiB held instead of growing without bound.
 */
class StdoutLog {
  readonly #sonic: SonicBoom;
  /** Past this instant a full pipe is given up on (`Infinity` until the drain). */
  #giveUpAt = Number.POSITIVE_INFINITY;
  /** Set when the destination failed or the drain began: further lines are dropped. */
  #done = false;
  #closed: Promise<void>;

  constructor(fd: number) {
    // sonic-boom is CommonJS and names its class only on `module.exports` (no ESM named export).
    const { SonicBoom: Destination } = createRequire(import.meta.url)("sonic-boom") as {
      SonicBoom: typeof SonicBoom;
    };
    this.#sonic = new Destination({
      fd,
      sync: false,
      maxLength: LOG_BUFFER_MAX_BYTES,
      retryEAGAIN: () => Date.now() < this.#giveUpAt,
    });
    this.#closed = new Promise((resolve) => {
      this.#sonic.once("close", resolve);
      // EPIPE (nobody reads any more), EAGAIN past the drain's bound: a log cannot report its own failure.
      this.#sonic.on("error", () => {
        this.#done = true;
        resolve();
      });
    });
  }

  write(line: string): boolean {
    if (this.#done) return true;
    return this.#sonic.write(line);
  }

  flush(callback?: (error?: Error) => void): void {
    if (this.#done) callback?.();
    else this.#sonic.flush(callback);
  }

  /** Writes what is held, within `ms`; later lines are dropped. */
  async drain(ms: number): Promise<void> {
    if (!this.#done) {
      this.#done = true;
      this.#giveUpAt = Date.now() + ms;
      this.#sonic.end();
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    try {
      await Promise.race([this.#closed, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

let stdoutLog: StdoutLog | null = null;

export const processIo: ProcessIo = {
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  logger: (level) => {
    if (process.stdout.isTTY) return prettyLogger(level);
    stdoutLog ??= new StdoutLog(1);
    return pino({ level }, stdoutLog);
  },
  drainLog: (ms) => stdoutLog?.drain(ms) ?? Promise.resolve(),
  onSignal: (listener) => {
    for (const signal of SIGNALS) process.on(signal, listener);
    // Signals that came while the command was loading are heard now, in order (early-signals.ts).
    for (const signal of takeEarlySignals()) {
      queueMicrotask(() => {
        listener(signal);
      });
    }
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
  /**
   * Stops gracefully, whatever `start` has reached (it may still be under way); also called, its
   * failure ignored, when starting or `started` failed.
   */
  readonly stop: () => Promise<void>;
  /**
   * How long `stop` may take before the command gives up on it and exits anyway (1): the shutdown
   * grace plus the moment needed to hand back and close the store (docs/operations.md#what-happens-on-shutdown).
   */
  readonly stopWithinMs: number;
  /** Logged with the signal when the first one arrives. */
  readonly stopping: string;
  /** Logged once stopped. */
  readonly stopped: string;
}

/** How long the log's last lines may take to be written once a command has stopped. */
export const LOG_DRAIN_MS = 1000;

/** `stop()`, or false when it has not finished within `ms`. */
async function stopWithin(stop: () => Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([stop().then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts, runs until the first SIGTERM/SIGINT, then stops gracefully and resolves with exit code 0; a
 * second signal ends the process at once (`stopSignals`). A signal while starting stops at once too:
 * the start is not waited for. A stop that outlasts `stopWithinMs` resolves with 1 (the caller exits).
 * A failure to start stops what did start and rejects.
 */
export async function runUntilSignal<T>(run: UntilSignal<T>): Promise<number> {
  const { logger } = run;
  const { signalled, stop: stopListening } = stopSignals(run.io, logger);
  const starting = run.start();
  // Once a signal has won the race, a start that fails afterwards is part of stopping, not news.
  starting.catch(() => undefined);
  try {
    const first = await Promise.race([
      starting.then((value) => ({ started: true as const, value })),
      signalled.then((signal) => ({ started: false as const, signal })),
    ]);
    let signal: NodeJS.Signals;
    if (first.started) {
      await run.started(first.value);
      signal = await signalled;
      logger.info({ signal }, run.stopping);
    } else {
      signal = first.signal;
      logger.info({ signal }, `${run.stopping} (during startup)`);
    }
    if (!(await stopWithin(run.stop, run.stopWithinMs))) {
      logger.warn(
        { signal, graceMs: run.stopWithinMs },
        "not stopped within the shutdown grace: exiting anyway",
      );
      logger.flush();
      return 1;
    }
    logger.info({}, run.stopped);
    logger.flush();
    return 0;
  } catch (error) {
    await stopWithin(() => run.stop().catch(() => undefined), run.stopWithinMs);
    throw error;
  } finally {
    stopListening();
    // The last lines get a moment to be written, not more: the caller exits next.
    await run.io.drainLog?.(LOG_DRAIN_MS);
  }
}
