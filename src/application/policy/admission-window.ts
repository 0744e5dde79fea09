/**
 * The runs each owner was admitted in the last minute, as this replica admitted them, for the
 * `runs_per_minute` quota (docs/operations.md#quotas). Counted in one-second buckets; `now` is always
 * given (the application reads no clock). Other replicas' admissions are not seen: the quota holds per
 * replica, as the docs say.
 */
import type { OwnerId } from "../../domain/ids.js";
import type { Instant } from "../../domain/time.js";
import { MINUTE_MS } from "./quotas.js";

const BUCKET_MS = 1_000;

export class AdmissionWindow {
  /** By owner: bucket start (ms) to runs admitted in it. */
  readonly #buckets = new Map<OwnerId, Map<number, number>>();

  /** Runs `owner` was admitted in the minute before `now`. */
  count(owner: OwnerId, now: Instant): number {
    const buckets = this.#buckets.get(owner);
    if (buckets === undefined) return 0;
    let total = 0;
    for (const [start, runs] of buckets) {
      if (start <= now - MINUTE_MS) buckets.delete(start);
      else total += runs;
    }
    if (buckets.size === 0) this.#buckets.delete(owner);
    return total;
  }

  /** Counts `runs` more admitted to `owner` at `now`. */
  add(owner: OwnerId, now: Instant, runs: number): void {
    if (runs <= 0) return;
    const start = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    let buckets = this.#buckets.get(owner);
    if (buckets === undefined) {
      buckets = new Map();
      this.#buckets.set(owner, buckets);
    }
    buckets.set(start, (buckets.get(start) ?? 0) + runs);
  }

  /** Gives back `runs` added at `now` that were not made after all (a trigger that failed). */
  release(owner: OwnerId, now: Instant, runs: number): void {
    const start = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    const buckets = this.#buckets.get(owner);
    const held = buckets?.get(start);
    if (buckets === undefined || held === undefined) return;
    if (held > runs) buckets.set(start, held - runs);
    else buckets.delete(start);
  }
}
