/**
 * `punctual/testing`: replay time through the real coordinator. A virtual clock and an in-memory store let
 * a test run a year of fires (DST included) in a moment and assert on the run ledger.
 *
 * @example
 * ```ts
 * import { createTestScheduler } from "punctual/testing";
 * const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
 * const { task } = await scheduler.tasks.create({ title: "daily", schedule: { type: "cron", cron: "30 2 * * *",
 *   timezone: "Europe/Berlin" }, target: { kind: "handler", name: "log" } });
 * await scheduler.advanceTo("2027-01-01T00:00:00Z");
 * const runs = await scheduler.ledger(task.id);
 * ```
 */
import { createScheduler } from "./composition.js";
import type { Scheduler } from "./composition.js";
import type { CreateSchedulerOptions } from "./composition.js";
import type { StoreFactory } from "./domain/ports/store.js";
import type { HandlerInputMap } from "./application/shapes/handler-input-types.js";
import type {
  HandlerInputsOf,
  HandlersOption,
} from "./adapters/launchers/handler/handler-definition.js";
import type { RunView } from "./application/shapes/view-mappers.js";
import { memoryStore } from "./adapters/storage/memory/memory-store.js";
import type { Instant } from "./domain/time.js";
import { VirtualClock } from "./runtime/clock.js";

export { VirtualClock } from "./runtime/clock.js";
export { memoryStore } from "./adapters/storage/memory/memory-store.js";

export interface TestSchedulerOptions extends Omit<CreateSchedulerOptions, "store" | "clock"> {
  /** Where virtual time starts. */
  readonly start: Date | string | number;
  /** @default an in-memory store */
  readonly store?: StoreFactory;
}

export interface TestScheduler<I extends HandlerInputMap | null = null> extends Scheduler<I> {
  readonly clock: VirtualClock;
  /** Moves virtual time to `until`, running every tick the coordinator would have run on the way. */
  advanceTo(until: Date | string | number): Promise<void>;
  /** Moves virtual time forward by `ms`. */
  advanceBy(ms: number): Promise<void>;
  /** Every run of a task (or of all the library owner's tasks), oldest first. */
  ledger(taskId: string): Promise<RunView[]>;
}

const TICK_MS = 1000;

function toMs(value: Date | string | number): number {
  const ms =
    value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : value;
  if (!Number.isFinite(ms)) throw new RangeError(`not an instant: ${String(value)}`);
  return ms;
}

/** A scheduler on a virtual clock; time moves only through `advanceTo` / `advanceBy`. */
export function createTestScheduler<const H extends HandlersOption = HandlersOption>(
  options: TestSchedulerOptions & { readonly handlers?: H },
): TestScheduler<HandlerInputsOf<H>> {
  const clock = new VirtualClock(toMs(options.start));
  const scheduler = createScheduler<H>({
    ...options,
    store: options.store ?? memoryStore(),
    clock,
    // A replay keeps the whole ledger unless told otherwise: retention is for long-running servers.
    coordinator: { retentionMs: Number.MAX_SAFE_INTEGER, ...options.coordinator },
  });

  const advanceTo = async (until: Date | string | number): Promise<void> => {
    const target = toMs(until);
    const rt = await scheduler.runtime();
    for (;;) {
      await rt.coordinator.tick();
      await rt.coordinator.settle();
      const now = clock.now();
      if (now >= target) return;
      // Nothing happens between wake-ups in a replay, so jump straight to the next one.
      const next = await rt.dispatch.wakeUps.nextWakeAt();
      const wakeAt = next !== null && next > now ? next : now + TICK_MS;
      await clock.set(Math.min(target, wakeAt) as Instant);
    }
  };

  return {
    ...scheduler,
    clock,
    advanceTo,
    advanceBy: (ms) => advanceTo(clock.now() + ms),
    ledger: async (taskId) => {
      const runs: RunView[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<Scheduler["tasks"]["runs"]>> = await scheduler.tasks.runs(
          taskId,
          cursor === null ? { limit: 200 } : { limit: 200, cursor },
        );
        runs.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== null);
      return runs.reverse();
    },
  };
}
