/**
 * CPU time of PostgreSQL backends, read from /proc: the server runs on this machine, so each backend
 * connected to a bench database is a process whose utime + stime we can sample. A sampler polls
 * `pg_stat_activity` for the database's backends and keeps the first and last reading of each pid, so
 * backends that come and go during a phase are counted up to their last sample. It also reads the
 * server's WAL position at start and stop: the bytes of write-ahead log written in between are a
 * measure of the database's write work that, unlike CPU time, does not move with the machine's load.
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
  #walStart: bigint | null = null;
  #walBytes: number | null = null;

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
    this.#walStart = await walPosition(client);
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
    if (this.#client !== null && this.#walStart !== null) {
      const end = await settledWalPosition(this.#client);
      this.#walBytes = end === null ? null : Number(end - this.#walStart);
    }
    await this.#client?.end();
    this.#client = null;
    if (!this.#readable) return null;
    let total = 0;
    for (const reading of this.#readings.values()) total += reading.last - reading.first;
    return total;
  }

  /**
   * Bytes of WAL the whole server wrote between `start()` and `stop()` (null before `stop()`, or when
   * the position could not be read). The server is shared by nothing else during a bench phase, so this
   * is the scheduler's writes, plus whatever autovacuum did meanwhile.
   */
  get walBytes(): number | null {
    return this.#walBytes;
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

/** The server's current WAL insert position, in bytes from the start of the log; null when unreadable. */
async function walPosition(client: pg.Client): Promise<bigint | null> {
  try {
    const result = await client.query<{ at: string }>(
      "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text AS at",
    );
    const at = result.rows[0]?.at;
    return at === undefined ? null : BigInt(at.split(".")[0] ?? "0");
  } catch {
    return null;
  }
}

/**
 * The WAL position once writing has stopped: a system may still be recording completions when its last
 * handler has started (graphile-worker and pg-boss batch them), so the position is read until it holds
 * still for 300 ms, for at most 5 s. Every system is measured by the same rule.
 */
async function settledWalPosition(client: pg.Client): Promise<bigint | null> {
  let last = await walPosition(client);
  const until = Date.now() + 5000;
  while (last !== null && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await walPosition(client);
    if (now === last) break;
    last = now;
  }
  return last;
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

  /** Redis writes no WAL. */
  readonly walBytes = null;

  stop(): Promise<number | null> {
    const last = this.#pid === null ? null : processCpuSeconds(this.#pid);
    return Promise.resolve(last === null || this.#first === null ? null : last - this.#first);
  }
}
