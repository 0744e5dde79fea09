/**
 * The messages between the bench and its worker processes (punctual replicas and peer workers), over
 * Node's IPC channel. A worker says `ready` once it runs; the bench asks for `stats` (CPU used so far,
 * executions recorded) and finally `stop`, answered by `stopped` after a graceful stop.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface WorkerStats {
  /** `process.cpuUsage()` user + system, in microseconds, since the process started. */
  readonly cpuMicros: number;
  /** Executions this worker's handler recorded. */
  readonly executed: number;
  readonly rssBytes: number;
  /**
   * The event loop's delay since the last `stats` request that asked for a reset (ms, p99 and max):
   * how long a timer, an IPC message or an HTTP request in the same process would have waited behind
   * the scheduler's work.
   */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /**
   * SQL statements this worker sent since it started, each one round trip to the database (punctual's
   * replicas on PostgreSQL; absent elsewhere).
   */
  readonly statements?: number;
  /** Transactions (`BEGIN`) and heartbeat writes among those statements. */
  readonly transactions?: number;
  readonly heartbeats?: number;
  /** Bytes read from the database's sockets since the worker started (with `statements`). */
  readonly bytesReceived?: number;
}

export type ToWorker =
  { readonly type: "stats"; readonly reset: boolean } | { readonly type: "stop" };

export type FromWorker =
  | { readonly type: "ready" }
  | ({ readonly type: "stats" } & WorkerStats)
  | ({ readonly type: "stopped" } & WorkerStats)
  | { readonly type: "failed"; readonly message: string };

function send(message: FromWorker, then?: () => void): void {
  if (process.send === undefined) {
    then?.();
    return;
  }
  process.send(message, undefined, {}, () => then?.());
}

/** Worker side: answers the bench's requests; `stop` runs `onStop` and exits. */
export function serveBench(handlers: {
  readonly executed: () => number;
  readonly statements?: () => {
    statements: number;
    transactions: number;
    heartbeats: number;
    bytesReceived: number;
  };
  readonly onStop: () => Promise<void>;
}): { ready(): void; fail(error: unknown): never } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const stats = (): WorkerStats => {
    const cpu = process.cpuUsage();
    const answer = {
      cpuMicros: cpu.user + cpu.system,
      executed: handlers.executed(),
      rssBytes: process.memoryUsage.rss(),
      loopDelayP99Ms: Math.round(delay.percentile(99) / 1e6),
      loopDelayMaxMs: Math.round(delay.max / 1e6),
      ...(handlers.statements === undefined ? {} : handlers.statements()),
    };
    return answer;
  };
  let stopping = false;
  process.on("message", (message: ToWorker) => {
    if (message.type === "stats") {
      send({ type: "stats", ...stats() });
      if (message.reset) delay.reset();
      return;
    }
    if (stopping) return;
    stopping = true;
    void handlers.onStop().then(
      () => {
        // Exit explicitly: a peer library may keep timers; `--cpu-prof` still writes its profile.
        send({ type: "stopped", ...stats() }, () => process.exit(0));
      },
      (error: unknown) => {
        send({ type: "failed", message: String(error) }, () => process.exit(1));
      },
    );
  });
  // The bench died: do not linger.
  process.on("disconnect", () => {
    if (!stopping) process.exit(0);
  });
  return {
    ready: () => {
      send({ type: "ready" });
    },
    fail: (error: unknown): never => {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      send({ type: "failed", message }, () => process.exit(1));
      // Wait for the message to leave; the callback exits.
      throw error;
    },
  };
}
