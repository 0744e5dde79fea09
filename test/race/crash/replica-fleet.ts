/**
 * A fleet of `punctual worker` processes (the built CLI) on one database: started, SIGKILLed and
 * restarted slot by slot, and stopped gracefully. It remembers every replica id it has seen, and which
 * of them were killed, for the ledger check.
 */
import { startCli, stopCli, waitFor } from "../../e2e/process.js";
import type { CliProcess } from "../../e2e/process.js";

export interface FleetOptions {
  readonly size: number;
  /** Arguments after `worker`. */
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Arguments for one slot only, after the shared ones (a replica behind a proxy, say). */
  readonly slotArgs?: (slot: number) => readonly string[];
  /** Environment for one slot only, over the shared one (a replica under faketime, say). */
  readonly slotEnv?: (slot: number) => Readonly<Record<string, string>>;
  /** How long a worker may take to start. @default 30000 */
  readonly startTimeoutMs?: number;
  /**
   * Whether a replica holds a claim now (a run launching or running): a kill waits a little for its
   * victim to be busy, so that it strands work rather than hitting an idle moment.
   */
  readonly isBusy?: (replicaId: string) => Promise<boolean>;
}

export interface Member {
  readonly label: string;
  readonly cli: CliProcess;
  readonly replicaId: string;
}

/** The replica id a worker logged at start (pino JSON on stdout), if it has. */
function startedReplica(output: string): string | undefined {
  for (const line of output.split("\n")) {
    if (!line.includes('"punctual worker started"')) continue;
    const parsed = JSON.parse(line) as { replica?: unknown };
    if (typeof parsed.replica === "string") return parsed.replica;
  }
  return undefined;
}

export class ReplicaFleet {
  readonly #options: FleetOptions;
  readonly #members: (Member | null)[];
  readonly #generations: number[];
  /** Every process ever started, for cleanup and diagnostics. */
  readonly #all: { label: string; slot: number; cli: CliProcess }[] = [];
  readonly killed = new Set<string>();
  kills = 0;

  constructor(options: FleetOptions) {
    this.#options = options;
    this.#members = Array.from({ length: options.size }, () => null);
    this.#generations = Array.from({ length: options.size }, () => 0);
  }

  /** Starts every slot and waits until each has logged its start. */
  async start(): Promise<void> {
    await Promise.all(this.#members.map((_, slot) => this.#startSlot(slot)));
  }

  /** The worker in `slot` now, if one is running there. */
  member(slot: number): Member | null {
    return this.#members[slot] ?? null;
  }

  /** The workers running now (one per slot, unless a restart is under way). */
  get live(): readonly Member[] {
    return this.#members.filter((member): member is Member => member !== null);
  }

  async #startSlot(slot: number): Promise<Member> {
    const label = `r${slot + 1}.${++this.#generations[slot]!}`;
    const cli = startCli(
      ["worker", ...this.#options.args, ...(this.#options.slotArgs?.(slot) ?? [])],
      {
        cwd: this.#options.cwd,
        env: { ...this.#options.env, ...this.#options.slotEnv?.(slot), CRASH_REPLICA: label },
      },
    );
    this.#all.push({ label, slot, cli });
    const replicaId = await waitFor(
      () => {
        const id = startedReplica(cli.output());
        if (id !== undefined) return id;
        if (cli.child.exitCode !== null || cli.child.signalCode !== null) {
          throw new Error(`worker ${label} exited before starting:\n${cli.output()}`);
        }
        return undefined;
      },
      {
        timeoutMs: this.#options.startTimeoutMs ?? 30_000,
        what: `worker ${label} to start`,
        describe: cli.output,
      },
    );
    const member = { label, cli, replicaId };
    this.#members[slot] = member;
    return member;
  }

  /** SIGKILLs the worker in `slot`, leaving the slot empty; resolves with what it was once it is dead. */
  async kill(slot: number): Promise<Member | null> {
    const member = this.#members[slot] ?? null;
    if (member === null) return null;
    this.#members[slot] = null;
    this.killed.add(member.replicaId);
    this.kills++;
    member.cli.child.kill("SIGKILL");
    await member.cli.exited;
    return member;
  }

  /** SIGKILLs the worker in `slot` (once it is busy, for at most `busyWaitMs`), and starts a new one. */
  async killAndRestart(slot: number, busyWaitMs = 0): Promise<void> {
    const member = this.#members[slot];
    if (member !== null && member !== undefined) {
      await this.#untilBusy(member.replicaId, busyWaitMs);
      this.#members[slot] = null;
      this.killed.add(member.replicaId);
      this.kills++;
      member.cli.child.kill("SIGKILL");
      await member.cli.exited;
    }
    await this.#startSlot(slot);
  }

  async #untilBusy(replicaId: string, timeoutMs: number): Promise<void> {
    const isBusy = this.#options.isBusy;
    if (isBusy === undefined) return;
    const deadline = Date.now() + timeoutMs;
    // Not an assertion: an idle victim is killed anyway at the deadline.
    while (Date.now() < deadline && !(await isBusy(replicaId))) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /**
   * Kills a worker once in every `everyMs` (round robin, at a random instant) and restarts it, for
   * `durationMs`. The interval is the load's cadence, not a wait for a result.
   */
  async chaos(everyMs: number, durationMs: number): Promise<void> {
    const startedAt = Date.now();
    // A slot's restart runs while the next slot is killed; a slot is killed again only once restarted.
    const restarting = new Map<number, Promise<void>>();
    for (let kill = 1; kill * everyMs <= durationMs; kill++) {
      // A random instant in each interval: occurrences fall due on whole seconds, and kills at a fixed
      // phase would keep hitting the same moment of that cycle (often an idle one).
      const at = startedAt + (kill - 1 + Math.random()) * everyMs;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
      const slot = (kill - 1) % this.#options.size;
      await restarting.get(slot);
      restarting.set(slot, this.killAndRestart(slot, everyMs / 2));
    }
    await Promise.all(restarting.values());
  }

  /** SIGTERM to every live worker; resolves with each one's exit. */
  async stop(): Promise<{ label: string; exit: Awaited<CliProcess["exited"]>; output: string }[]> {
    const members = this.live;
    this.#members.fill(null);
    return Promise.all(
      members.map(async (member) => ({
        label: member.label,
        exit: await stopCli(member.cli, "SIGTERM", 30_000),
        output: member.cli.output(),
      })),
    );
  }

  /** SIGKILLs whatever is still running (cleanup after a failure). */
  async destroy(): Promise<void> {
    const running = this.#all.filter(
      ({ cli }) => cli.child.exitCode === null && cli.child.signalCode === null,
    );
    for (const { cli } of running) cli.child.kill("SIGKILL");
    await Promise.all(running.map(({ cli }) => cli.exited));
  }

  /** Every process's label with its slot. */
  labels(): [string, number][] {
    return this.#all.map(({ label, slot }) => [label, slot]);
  }

  /** The whole output of every process that ran in `slot`. */
  tailsOf(slot: number): string {
    return this.#all
      .filter((entry) => entry.slot === slot)
      .map(({ cli }) => cli.output())
      .join("\n");
  }

  /** The last `lines` lines of every process's output, for a failure message. */
  tails(lines = 15): string {
    return this.#all
      .map(({ label, cli }) => {
        const tail = cli.output().trimEnd().split("\n").slice(-lines).join("\n");
        return `--- ${label} (pid ${String(cli.child.pid)}) ---\n${tail}`;
      })
      .join("\n");
  }
}
