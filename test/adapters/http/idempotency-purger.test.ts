/**
 * `serve` forgets `Idempotency-Key` answers after their retention: the purger deletes older records in
 * batches until none is left, and a store failure is logged, never thrown.
 */
import { describe, expect, it } from "vitest";
import { IdempotencyPurger } from "../../../src/adapters/http/idempotency-purger.js";
import { MemoryIdempotencyRepository } from "../../../src/adapters/storage/memory/memory-idempotency-repository.js";
import type { OwnerId } from "../../../src/domain/ids.js";
import type { Instant } from "../../../src/domain/time.js";
import { RecordingLogger } from "../../runtime/harness.js";

const HOUR = 3_600_000;
const scope = (key: string) => ({ owner: "alice" as OwnerId, route: "POST /v1/tasks", key });

describe("IdempotencyPurger", () => {
  it("deletes every record older than the retention, over several batches", async () => {
    const records = new MemoryIdempotencyRepository();
    for (let i = 0; i < 2500; i++) await records.reserve(scope(`old-${i}`), "h", i as Instant);
    await records.reserve(scope("fresh"), "h", (30 * HOUR) as Instant);
    const purger = new IdempotencyPurger(
      records,
      () => (30 * HOUR + 1) as Instant,
      24 * HOUR,
      new RecordingLogger(),
    );
    await purger.purge();
    expect(await records.reserve(scope("old-0"), "h", (31 * HOUR) as Instant)).toBeNull();
    expect(await records.reserve(scope("old-2499"), "h", (31 * HOUR) as Instant)).toBeNull();
    expect(await records.reserve(scope("fresh"), "h", (31 * HOUR) as Instant)).not.toBeNull();
  });

  it("logs a failing store and carries on", async () => {
    const log = new RecordingLogger();
    const failing = new MemoryIdempotencyRepository();
    failing.purge = () => Promise.reject(new Error("database unreachable"));
    const purger = new IdempotencyPurger(failing, () => (30 * HOUR) as Instant, 24 * HOUR, log);
    await expect(purger.purge()).resolves.toBeUndefined();
    expect(log.at("warn")).toEqual(["could not purge old Idempotency-Key records"]);
  });
});
