/**
 * CPU time of PostgreSQL backends, read from /proc: the server runs on this machine, so each backend
 * connected to a bench database is a process whose utime + stime we can sample. A sampler polls
 * `pg_stat_activity` for the database's backends and keeps the first and last reading of each pid, so
 * backends that come and go during a phase are counted up to their last sample.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import pg from "pg";

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of `pid` in seconds, or null when it is gone or unreadable. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
    return (utime + stime) / clockTicks();
  } catch {
    return null;
  }
}

interface Reading {
  readonly first: number;
  last: number;
}

/** Samples the CPU of every backend connected to `database` from `start()` to `stop()`. */
export class BackendCpuSampler {
  readonly #database: string;
  readonly #adminUrl: string;
  readonly #readings = new Map<number, Reading>();
  #client: pg.Client | null = null;
  #timer: NodeJS.Timeout | null = null;
  #sampling: Promise<void> = Promise.resolve();
  #readable = true;

  constructor(adminUrl: string, database: string) {
    this.#adminUrl = adminUrl;
    this.#database = database;
  }

  async start(intervalMs = 500): Promise<void> {
    const client = new pg.Client({ connectionString: this.#adminUrl });
    client.on("error", () => undefined);
    await client.connect();
    this.#client = client;
    // The server's processes are readable only when it runs on this machine, in this pid namespace.
    const own = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const pid = own.rows[0]?.pid;
    this.#readable = pid !== undefined && processCpuSeconds(pid) !== null;
    await this.#sample(true);
    this.#timer = setInterval(() => {
      this.#sampling = this.#sampling.then(() => this.#sample(false));
    }, intervalMs);
  }

  /** Stops sampling; returns the backends' CPU seconds since `start()` (null if /proc was unreadable). */
  async stop(): Promise<number | null> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.#sampling;
    await this.#sample(false);
    await this.#client?.end();
    this.#client = null;
    if (!this.#readable) return null;
    let total = 0;
    for (const reading of this.#readings.values()) total += reading.last - reading.first;
    return total;
  }

  async #sample(baseline: boolean): Promise<void> {
    const client = this.#client;
    if (client === null) return;
    let pids: number[];
    try {
      const result = await client.query<{ pid: number }>(
        // Client backends only: autovacuum after a bulk load is the server's housekeeping, not the
        // scheduler's work.
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [this.#database],
      );
      pids = result.rows.map((row) => row.pid);
    } catch {
      return;
    }
    for (const pid of pids) {
      const cpu = processCpuSeconds(pid);
      // A backend that exited between the query and the read keeps its last reading.
      if (cpu === null) continue;
      const seen = this.#readings.get(pid);
      if (seen === undefined) {
        // A backend first seen at the start is counted from there; one born later, from zero.
        this.#readings.set(pid, { first: baseline ? cpu : 0, last: cpu });
      } else {
        seen.last = cpu;
      }
    }
  }
}

/** The CPU of one server process (Redis) from `start()` to `stop()`; null when /proc cannot tell. */
export class PidCpuSampler {
  readonly #pid: number | null;
  #first: number | null = null;

  constructor(pid: number | null) {
    this.#pid = pid;
  }

  start(): Promise<void> {
    this.#first = this.#pid === null ? null : processCpuSeconds(this.#pid);
    return Promise.resolve();
  }

  stop(): Promise<number | null> {
    const last = this.#pid === null ? null : processCpuSeconds(this.#pid);
    return Promise.resolve(last === null || this.#first === null ? null : last - this.#first);
  }
}
