/**
 * `runs_per_minute` across replicas on PostgreSQL (docs/decisions.md#runs-per-minute-across-replicas):
 * the runs an owner is queued are counted in `admission_counts` by the transaction that queues them, and
 * read there, so every replica sees every other's committed admissions. An owner far below its quota is
 * admitted under a shared advisory lock (no replica waits for another); one near it, under the exclusive
 * lock, which waits for the shared holders, so its count is exact. Only owners with a quota are counted.
 */
import type { OwnerId } from "../../../domain/ids.js";
import type { AdmissionRate } from "../../../domain/ports/task-repository.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresClient } from "./postgres-pool.js";
import { integer, record, text } from "./postgres-rows.js";
import { msToTimestamp } from "./postgres-sql.js";

/** A quota this high limits nothing (the library's default): nothing is counted. */
const NO_QUOTA = Number.MAX_SAFE_INTEGER;
/** Shards of an owner's counters: a store writes one, picked at random; a clash costs waits, not counts. */
const SHARDS = 16;
/** Lock-free transactions one store lets run at once for one owner; more take the exclusive lock. */
const IN_FLIGHT = 4;
/** A replica counts as live this long after its heartbeat (more replicas only make the margin wider). */
const LIVE_MS = 60_000;
/** The live replicas are read again this often. */
const REPLICAS_READ_EVERY_MS = 10_000;
const MINUTE_MS = 60_000;
const SECOND_MS = 1_000;

/** A lock-free transaction found its owner near the quota: nothing was written; admit again. */
export class AdmissionRateNear extends Error {}

/** A run as the gate counts it. */
interface CountedRun {
  readonly owner: OwnerId;
  readonly status: string;
}

interface OwnerGate {
  readonly perMinute: number;
  readonly exclusive: boolean;
  /** The most a lock-free transaction may queue for this owner, and what every one leaves free. */
  readonly cap: number;
  readonly margin: number;
  counted: number;
  queued: number;
}

/** The counters' statements and what this store knows of its owners and the fleet. */
export class PostgresAdmissionRate {
  readonly #ctx: PostgresContext;
  readonly #table: string;
  readonly #shard = Math.floor(Math.random() * SHARDS);
  /** Owners last found near their quota: their transactions take the exclusive lock. */
  readonly #near = new Set<OwnerId>();
  readonly #inFlight = new Map<OwnerId, number>();
  #replicas = { live: 1, readAt: Number.NEGATIVE_INFINITY };

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#table = `${ctx.schema.quoted}.admission_counts`;
  }

  /**
   * Locks and counts, in `client`'s transaction, the owners among `quotas` that have one; null when none
   * has (nothing is read or written then).
   */
  async open(
    client: PostgresClient,
    quotas: ReadonlyMap<OwnerId, number>,
    now: Instant,
  ): Promise<AdmissionRateGate | null> {
    const owners = [...quotas].filter(([, perMinute]) => perMinute < NO_QUOTA).sort(byOwner);
    if (owners.length === 0) return null;
    // Lock-free transactions in flight at once for an owner: this many per live replica, one replica
    // more than the registry shows (one starting now).
    const inFlight = ((await this.#liveReplicas(client, now)) + 1) * IN_FLIGHT;
    const gates = new Map<OwnerId, OwnerGate>();
    for (const [owner, perMinute] of owners) {
      const cap = Math.floor(perMinute / (4 * inFlight));
      const exclusive =
        cap < 1 || this.#near.has(owner) || (this.#inFlight.get(owner) ?? 0) >= IN_FLIGHT;
      if (!exclusive) this.#inFlight.set(owner, (this.#inFlight.get(owner) ?? 0) + 1);
      gates.set(owner, {
        perMinute,
        exclusive,
        cap,
        margin: cap * inFlight,
        counted: 0,
        queued: 0,
      });
    }
    const gate = new AdmissionRateGate(this, gates, now);
    try {
      const keys = owners.map(([owner]) => this.#lockKey(owner));
      await client.query(
        "SELECT CASE WHEN u.exclusive THEN pg_advisory_xact_lock(hashtextextended(u.key, 0))" +
          " ELSE pg_advisory_xact_lock_shared(hashtextextended(u.key, 0)) END" +
          " FROM unnest($1::text[], $2::bool[]) WITH ORDINALITY AS u(key, exclusive, n) ORDER BY u.n",
        [keys, owners.map(([owner]) => gates.get(owner)?.exclusive ?? true)],
      );
      // A statement after the lock: it sees every admission committed by the lock's previous holders.
      const counts = await client.query(
        `SELECT owner, sum(runs)::int8 AS n FROM ${this.#table}` +
          ` WHERE owner = ANY($1::text[]) AND bucket_at > ${msToTimestamp("$2::int8")}` +
          " GROUP BY owner",
        [owners.map(([owner]) => owner), now - MINUTE_MS],
      );
      for (const row of counts.rows) {
        const counted = gates.get(text(record(row), "owner") as OwnerId);
        if (counted !== undefined) counted.counted = integer(record(row), "n");
      }
    } catch (error) {
      gate.close();
      throw error;
    }
    return gate;
  }

  /** Writes the runs queued per owner at `now` into this store's shard of the counters. */
  async record(client: PostgresClient, queued: ReadonlyMap<OwnerId, number>, now: Instant) {
    const owners = [...queued].filter(([, runs]) => runs > 0).sort(byOwner);
    if (owners.length === 0) return;
    const bucket = Math.floor(now / SECOND_MS) * SECOND_MS;
    // The ring's slot is overwritten when its bucket is a minute old; a bucket met late adds.
    await client.query(
      `INSERT INTO ${this.#table} AS c (owner, shard, slot, bucket_at, runs)` +
        ` SELECT u.owner, $3::int2, $4::int2, ${msToTimestamp("$5::int8")}, u.runs` +
        " FROM unnest($1::text[], $2::int4[]) AS u(owner, runs)" +
        " ON CONFLICT (owner, shard, slot) DO UPDATE SET" +
        " runs = CASE WHEN c.bucket_at >= excluded.bucket_at THEN c.runs + excluded.runs" +
        " ELSE excluded.runs END, bucket_at = GREATEST(c.bucket_at, excluded.bucket_at)",
      [
        owners.map(([owner]) => owner),
        owners.map(([, runs]) => runs),
        this.#shard,
        (bucket / SECOND_MS) % 60,
        bucket,
      ],
    );
  }

  near(owner: OwnerId, isNear: boolean): void {
    if (isNear) this.#near.add(owner);
    else this.#near.delete(owner);
  }

  leave(owner: OwnerId): void {
    const left = (this.#inFlight.get(owner) ?? 1) - 1;
    if (left > 0) this.#inFlight.set(owner, left);
    else this.#inFlight.delete(owner);
  }

  #lockKey(owner: OwnerId): string {
    return `punctual.runs_per_minute:${this.#ctx.schema.name}:${owner}`;
  }

  async #liveReplicas(client: PostgresClient, now: Instant): Promise<number> {
    if (now - this.#replicas.readAt < REPLICAS_READ_EVERY_MS) return this.#replicas.live;
    const result = await client.query(
      `SELECT count(*)::int8 AS n FROM ${this.#ctx.schema.quoted}.replicas` +
        ` WHERE heartbeat_at >= ${msToTimestamp("$1::int8")}`,
      [now - LIVE_MS],
    );
    this.#replicas = { live: Math.max(1, integer(record(result.rows[0]), "n")), readAt: now };
    return this.#replicas.live;
  }
}

/** One transaction's counts: what `decide` is told, and what the transaction queued. */
export class AdmissionRateGate {
  readonly #rate: PostgresAdmissionRate;
  readonly #owners: Map<OwnerId, OwnerGate>;
  readonly #now: Instant;
  #closed = false;

  constructor(rate: PostgresAdmissionRate, owners: Map<OwnerId, OwnerGate>, now: Instant) {
    this.#rate = rate;
    this.#owners = owners;
    this.#now = now;
  }

  /** The owner's runs queued in the last minute on every replica, this transaction's so far included. */
  admitted(owner: OwnerId): number | undefined {
    const gate = this.#owners.get(owner);
    return gate === undefined ? undefined : gate.counted + gate.queued;
  }

  /** Counts the queued runs among `runs` (a decision just made). */
  add(runs: readonly CountedRun[]): void {
    for (const run of runs) {
      const gate = this.#owners.get(run.owner);
      if (gate !== undefined && run.status === "queued") gate.queued++;
    }
  }

  /**
   * Before anything is written: a lock-free owner whose transaction went near its quota (or queued more
   * than a lock-free one may) is remembered as near, and the transaction must be made again.
   * @throws AdmissionRateNear
   */
  check(): void {
    let near = false;
    for (const [owner, gate] of this.#owners) {
      const isNear =
        gate.queued > gate.cap || gate.counted + gate.queued + gate.margin > gate.perMinute;
      if (isNear && !gate.exclusive) near = true;
      this.#rate.near(owner, isNear);
    }
    if (near) throw new AdmissionRateNear();
  }

  /** Records the queued runs among `runs` (what the transaction writes), in the transaction. */
  async record(client: PostgresClient, runs: readonly CountedRun[]): Promise<void> {
    const queued = new Map<OwnerId, number>();
    for (const run of runs) {
      if (run.status === "queued" && this.#owners.has(run.owner)) {
        queued.set(run.owner, (queued.get(run.owner) ?? 0) + 1);
      }
    }
    await this.#rate.record(client, queued, this.#now);
  }

  /** The transaction ended: its lock-free owners leave. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [owner, gate] of this.#owners) if (!gate.exclusive) this.#rate.leave(owner);
  }
}

/** The gates a transaction opened, closed when it ends (committed, rolled back or made again). */
export class HeldGates {
  readonly #gates: AdmissionRateGate[] = [];

  hold(gate: AdmissionRateGate | null): AdmissionRateGate | null {
    if (gate !== null) this.#gates.push(gate);
    return gate;
  }

  close(): void {
    for (const gate of this.#gates.splice(0)) gate.close();
  }
}

/** The quota of each task's owner, when `rate` is given. */
export function quotasOf(
  tasks: readonly { readonly owner: OwnerId }[],
  rate: AdmissionRate | undefined,
): ReadonlyMap<OwnerId, number> {
  const quotas = new Map<OwnerId, number>();
  if (rate === undefined) return quotas;
  for (const { owner } of tasks) if (!quotas.has(owner)) quotas.set(owner, rate.perMinute(owner));
  return quotas;
}

/** Attempts at a transaction that finds lock-free owners near their quota (each attempt locks more). */
const ATTEMPTS_WHEN_NEAR = 8;

/** Runs `work` (one transaction) again while it finds a lock-free owner near its quota. */
export async function admitAgainWhenNear<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      // The owners it found near are remembered: the next attempt locks them exclusively.
      if (!(error instanceof AdmissionRateNear) || attempt >= ATTEMPTS_WHEN_NEAR) throw error;
    }
  }
}

function byOwner([a]: readonly [OwnerId, number], [b]: readonly [OwnerId, number]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
