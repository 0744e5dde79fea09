/**
 * What the coordinator (coordinator.ts) is built from: the dispatch use cases, the launcher, the clock
 * and the optional parts of a replica (its wake-ups, its in-process runs, events and tracing).
 */
import type { Dispatch } from "../application/dispatch/dispatch.js";
import type { EventSink } from "../application/events/internal-events.js";
import type { Logger } from "../application/events/logger.js";
import type { Tracer } from "../application/events/tracing.js";
import type { RunId } from "../domain/ids.js";
import type { RunLauncher } from "../domain/ports/run-launcher.js";
import type { ReferenceClock, WakeSource } from "../domain/ports/store.js";
import type { Clock } from "./clock.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import type { WakeSignal } from "./wake-signal.js";

import type { HolidayUpkeep } from "../application/calendars/calendar-service.js";
import type { Instant } from "../domain/time.js";

export interface CoordinatorDeps {
  readonly dispatch: Dispatch;
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  readonly replicaId: string;
  /** Handler names this replica can run. */
  readonly handlerNames: ReadonlySet<string>;
  readonly logger?: Logger;
  readonly wake?: WakeSignal;
  readonly options?: CoordinatorOptions;
  /** The store's clock: its offset is measured at start and every 10 minutes (docs/operations.md#clock-skew). */
  readonly referenceClock?: ReferenceClock;
  /** Applies a measured clock offset (the system clock's `setOffset`). */
  readonly applyClockOffset?: (offsetMs: number) => void;
  /** How far the wall clock stepped since the last offset applied (the system clock's `wallStepMs`). */
  readonly wallStepMs?: () => number;
  /** Wake-ups from other replicas through the store, heard between `listen()` and `stop()`. */
  readonly wakes?: WakeSource;
  /** Runs executing in this process (handler targets), handed back at shutdown. */
  readonly inProcess?: InProcessRuns;
  /** Watches running runs on targets that must be asked (agent servers); started and stopped with it. */
  readonly watcher?: { start(): void; stop(): Promise<void> };
  /** Receives `coordinator:tick` after every pass. @default none */
  readonly events?: EventSink;
  /** Spans for admission batches, claims, launches and verdicts (docs/operations.md#tracing). @default none */
  readonly tracer?: Tracer;
  /**
   * Brings the calendars following a region's public holidays up to the horizon
   * (docs/schedules.md#holidays): called by the first sweep of each UTC day on the runtime's clock.
   * @default none
   */
  readonly holidayUpkeep?: (now: Instant) => Promise<HolidayUpkeep>;
}

/** Runs this process executes itself (the handler launcher): what shutdown needs from them. */
export interface InProcessRuns {
  /** How many are running now. */
  readonly running: number;
  /** Resolves once every run executing now has settled and its verdict has been recorded. */
  settled(): Promise<void>;
  /** Aborts every one still running (shutdown): they are recorded lost with this replica. */
  abandon(): void;
  /** Whether the run is executing in this process. */
  runsHere(runId: RunId): boolean;
}
