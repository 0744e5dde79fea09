/**
 * Bench side of the worker processes: fork a TypeScript worker (`node --import tsx`), wait until it is
 * ready, read its CPU and execution counts, stop it gracefully (killed if it hangs).
 */
import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import type { FromWorker, ToWorker, WorkerStats } from "./child-protocol.js";
import { processCpuSeconds } from "./proc-cpu.js";
import { progress } from "./progress.js";

export interface WorkerOptions {
  /** The worker's module (a .ts file). */
  readonly module: string;
  /** Handed to the worker as its first argument, as JSON. */
  readonly config: unknown;
  /** Extra Node flags (`--cpu-prof`, ...). */
  readonly nodeFlags?: readonly string[];
  readonly label: string;
}

const READY_TIMEOUT_MS = 120_000;
const running = new Set<WorkerProcess>();

/** Kills every worker still running (the bench failed or was interrupted). */
export function killAllWorkers(): void {
  for (const worker of running) worker.kill();
}
const STOP_TIMEOUT_MS = 30_000;

export class WorkerProcess {
  readonly label: string;
  readonly #child: ChildProcess;
  readonly #waiters: ((message: FromWorker) => boolean)[] = [];
  #exited = false;
  #failure: string | null = null;
  #ready: Promise<void> | null = null;
  #exit: Promise<number | null>;

  constructor(options: WorkerOptions) {
    this.label = options.label;
    this.#child = fork(options.module, [JSON.stringify(options.config)], {
      execArgv: ["--import", "tsx", ...(options.nodeFlags ?? [])],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child.on("message", (message: FromWorker) => {
      if (message.type === "failed") this.#failure = message.message;
      const index = this.#waiters.findIndex((accept) => accept(message));
      if (index >= 0) this.#waiters.splice(index, 1);
    });
    running.add(this);
    this.#exit = new Promise((resolve) => {
      this.#child.on("exit", (code) => {
        this.#exited = true;
        running.delete(this);
        resolve(code);
        // Wake every waiter: none of their answers will come.
        for (const accept of this.#waiters.splice(0)) accept({ type: "failed", message: "exited" });
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  #await<T extends FromWorker["type"]>(
    types: readonly T[],
    timeoutMs: number,
  ): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.label}: no ${types.join("/")} within ${timeoutMs} ms`));
      }, timeoutMs);
      const accept = (message: FromWorker): boolean => {
        if (message.type === "failed") {
          clearTimeout(timer);
          reject(new Error(`${this.label} failed: ${this.#failure ?? message.message}`));
          return true;
        }
        if (!(types as readonly string[]).includes(message.type)) return false;
        clearTimeout(timer);
        resolve(message as Extract<FromWorker, { type: T }>);
        return true;
      };
      if (this.#exited) {
        accept({ type: "failed", message: "exited" });
        return;
      }
      this.#waiters.push(accept);
    });
  }

  #send(message: ToWorker): void {
    if (!this.#exited && this.#child.connected) this.#child.send(message);
  }

  /** Resolves once the worker said it runs (the same promise on every call). */
  ready(): Promise<void> {
    this.#ready ??= this.#await(["ready"], READY_TIMEOUT_MS).then(() => undefined);
    return this.#ready;
  }

  /**
   * Counts so far, over IPC; `reset` starts a new event-loop-delay window (at a measurement's start).
   * The answer waits for the worker's event loop, which a busy scheduler may hold for seconds.
   */
  async stats(reset = false, timeoutMs = 60_000): Promise<WorkerStats> {
    const answer = this.#await(["stats"], timeoutMs);
    this.#send({ type: "stats", reset });
    return answer;
  }

  /** `stats`, or null when the worker does not answer within `timeoutMs`. */
  async tryStats(reset: boolean, timeoutMs: number): Promise<WorkerStats | null> {
    try {
      return await this.stats(reset, timeoutMs);
    } catch {
      return null;
    }
  }

  /**
   * The worker's CPU seconds (user + system) from /proc, read without its cooperation, so the reading
   * is taken when asked even while its event loop is busy; over IPC where /proc cannot be read.
   */
  async cpuSeconds(): Promise<number> {
    const pid = this.#child.pid;
    const fromProc = pid === undefined ? null : processCpuSeconds(pid);
    if (fromProc !== null) return fromProc;
    return (await this.stats()).cpuMicros / 1e6;
  }

  /**
   * Graceful stop (the worker flushes its ledger); returns the final stats, or null when the worker did
   * not answer in time and was killed (its event loop held by work that never paused).
   */
  async stop(): Promise<WorkerStats | null> {
    if (this.#exited) return null;
    const answer = this.#await(["stopped"], STOP_TIMEOUT_MS);
    this.#send({ type: "stop" });
    try {
      const stats = await answer;
      await this.#exit;
      return stats;
    } catch {
      progress(this.label, `did not stop within ${STOP_TIMEOUT_MS / 1000} s; killed`);
      this.kill();
      await this.#exit;
      return null;
    }
  }

  kill(): void {
    if (!this.#exited) this.#child.kill("SIGKILL");
  }
}

/** Sum of the workers' CPU seconds between two readings of `cpuSeconds()`. */
export function cpuSecondsBetween(before: readonly number[], after: readonly number[]): number {
  return after.reduce((sum, seconds, i) => sum + seconds - (before[i] ?? seconds), 0);
}

/** Every worker's CPU seconds so far. */
export function cpuOf(workers: readonly WorkerProcess[]): Promise<number[]> {
  return Promise.all(workers.map((w) => w.cpuSeconds()));
}
