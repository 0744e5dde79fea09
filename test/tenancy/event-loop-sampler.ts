/**
 * How long the event loop was held, measured inside the process that serves the requests (the test
 * server runs in the test's own process). A timer ticks every millisecond; each gap between two ticks
 * is the time the loop could not run it. A loaded machine also stretches gaps by descheduling the
 * process, which is not punctual holding the loop, so each gap is counted as the process's CPU time
 * spent in it when that is less than the gap: a request that computes for 150 ms shows 150 ms
 * whatever the machine's load, a process descheduled for 150 ms shows almost nothing. That CPU time is
 * the whole process's (the collector's threads add theirs), so the loop is taken as held for the lesser
 * of it and `monitorEventLoopDelay`'s maximum (which counts wall time): a request that holds the loop
 * shows in both (`heldMs`).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface LoopSample {
  /** How long the loop was held at most: the lesser of the two measures below. */
  readonly heldMs: number;
  /** The longest gap counted as the CPU time spent in it (or the gap, when less). */
  readonly blockedMs: number;
  /** The longest wall-clock gap between two ticks. */
  readonly wallMs: number;
  /** `monitorEventLoopDelay`'s maximum over the same time. */
  readonly histogramMaxMs: number;
}

export class EventLoopSampler {
  #timer: NodeJS.Timeout | null = null;
  #blocked = 0;
  #wall = 0;
  readonly #histogram = monitorEventLoopDelay({ resolution: 10 });

  start(): void {
    this.#blocked = 0;
    this.#wall = 0;
    this.#histogram.reset();
    this.#histogram.enable();
    let lastWall = performance.now();
    let lastCpu = process.cpuUsage();
    const tick = (): void => {
      const wall = performance.now();
      const cpu = process.cpuUsage(lastCpu);
      const gap = wall - lastWall;
      const cpuMs = (cpu.user + cpu.system) / 1000;
      this.#wall = Math.max(this.#wall, gap);
      this.#blocked = Math.max(this.#blocked, Math.min(gap, cpuMs));
      lastWall = wall;
      lastCpu = process.cpuUsage();
      this.#timer = setTimeout(tick, 1);
    };
    this.#timer = setTimeout(tick, 1);
  }

  stop(): LoopSample {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#histogram.disable();
    const histogramMaxMs = Math.round(this.#histogram.max / 1e6);
    return {
      heldMs: Math.min(Math.round(this.#blocked), histogramMaxMs),
      blockedMs: Math.round(this.#blocked),
      wallMs: Math.round(this.#wall),
      histogramMaxMs,
    };
  }
}
