/**
 * The coordinator (docs/architecture.md#cadence): the one loop per replica that owns cadence. Each tick
 * sweeps (expired claims, deadlines, queue timeouts, lost replicas, retention), then admits due tasks
 * batch by batch, claiming queued runs within the budget after each batch (admission-rounds.ts) and
 * launching them outside any transaction (launches.ts); launch answers and verdicts are written behind,
 * in batches (run-write-queue.ts). Sweeps: sweeps.ts. It sleeps until due, a wake-up or the tick.
 *
 * Lifecycle: idle -> running (start) -> stopping (stop: no new claims or admissions; in-flight launches
 * and running handlers finish within the shutdown timeout, claims are never released early; handlers
 * still running then are aborted and recorded lost, shutdown-drain.ts) -> stopped. The replica
 * heartbeats from start until its shutdown has drained (replica-heartbeat.ts), and a pass beats as it starts
 * when a beat is due (a third of the liveness timeout since the last one) or the last one failed.
 */
import { NO_EVENTS } from "../application/events/internal-events.js";
import { NO_TRACING } from "../application/events/tracing.js";
import type { Tracer } from "../application/events/tracing.js";
import type { EventSink } from "../application/events/internal-events.js";
import { exponentialBackoffMs } from "../domain/backoff.js";
import type { RunId } from "../domain/ids.js";
import type { Run } from "../domain/run.js";
import type { CompletionVerdict } from "../domain/run-change.js";
import type { Task } from "../domain/task.js";
import type { DurationMs, Instant } from "../domain/time.js";
import type { Logger } from "../application/events/logger.js";
import { silentLogger } from "../application/events/logger.js";
import { WakeSignal } from "./wake-signal.js";
import { ClaimTrigger } from "./claim-trigger.js";
import { AdmissionRounds, yieldToEventLoop } from "./admission-rounds.js";
import { Launches } from "./launches.js";
import { BackgroundWork } from "./background-work.js";
import { ClockCorrection } from "./clock-correction.js";
import { ReplicaHeartbeat } from "./replica-heartbeat.js";
import { sweep, sweepOrphans } from "./sweeps.js";
import { DAY_MS } from "../domain/time.js";
import { Retention } from "./retention.js";
import { drainForShutdown } from "./shutdown-drain.js";
import { withDefaults } from "./coordinator-options.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import type { CoordinatorDeps } from "./coordinator-deps.js";

export class Coordinator {
  readonly #deps: CoordinatorDeps;
  readonly #log: Logger;
  readonly #wake: WakeSignal;
  readonly #events: EventSink;
  readonly #tracer: Tracer;
  readonly #opts: Required<CoordinatorOptions>;
  readonly #stopController = new AbortController();
  readonly #launches: Launches;
  readonly #background: BackgroundWork;
  readonly #clockCorrection: ClockCorrection | null;
  readonly #heartbeat: ReplicaHeartbeat;
  readonly #rounds: AdmissionRounds;
  readonly #claimTrigger: ClaimTrigger;
  readonly #retention: Retention;
  #loop: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  /** The wake-up subscription `listen()` made: resolves with the function that ends it. */
  #listening: Promise<() => Promise<void>> | null = null;
  #lastSweepAt = Number.NEGATIVE_INFINITY;
  /** The UTC day (days since 1970-01-01) of the last holiday check. */
  #holidayCheckDay = Number.NEGATIVE_INFINITY;
  #errorStreak = 0;
  /** Aborted when shutdown stops waiting for in-flight work: pending retries give up. */
  readonly #drainDeadline = new AbortController();
  /** Whether the handler runs an earlier process left under this replica id were swept. */
  #orphansSwept = false;

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
    this.#log = deps.logger ?? silentLogger;
    this.#wake = deps.wake ?? new WakeSignal();
    this.#events = deps.events ?? NO_EVENTS;
    this.#tracer = deps.tracer ?? NO_TRACING;
    this.#background = new BackgroundWork(this.#log);
    this.#clockCorrection =
      deps.referenceClock === undefined || deps.applyClockOffset === undefined
        ? null
        : new ClockCorrection({
            clock: deps.clock,
            reference: deps.referenceClock,
            apply: deps.applyClockOffset,
            log: this.#log,
            ...(deps.wallStepMs === undefined ? {} : { wallStepMs: deps.wallStepMs }),
          });
    this.#opts = withDefaults(deps.options ?? {}, deps.dispatch.budget.policy.maxConcurrentRuns);
    const livenessMs = deps.dispatch.budget.policy.livenessMs;
    this.#heartbeat = new ReplicaHeartbeat({
      ...deps,
      replicas: deps.dispatch.replicas,
      log: this.#log,
      livenessMs,
      beaten: (at) => {
        this.#events.emit("coordinator:heartbeat", { at });
        // The store answers again while the loop backs off (a partition healed, the database is
        // back): pass now rather than at the back-off's end, up to 30 s away
        // (docs/operations.md#faults-and-recovery).
        if (this.#errorStreak > 0) this.#wake.wake();
      },
    });
    this.#launches = new Launches({
      runWrites: deps.dispatch.runWrites,
      budget: deps.dispatch.budget,
      launcher: deps.launcher,
      clock: deps.clock,
      log: this.#log,
      background: this.#background,
      writeBatch: this.#opts.writeBatch,
      giveUp: this.#drainDeadline.signal,
      cancelTarget: (run, task) => {
        this.#cancelTarget(run, task);
      },
      completed: (requeued) => {
        // A retry queued again: a pass looks at when it comes due. Otherwise a slot is free: a claim.
        if (requeued) this.#wake.wake();
        else this.#claimTrigger.freed();
      },
      ...(deps.tracer === undefined ? {} : { tracer: deps.tracer }),
      writeFailed: () => {
        this.#events.emit("store:failed", { operation: "write" });
      },
    });
    this.#retention = new Retention({
      recovery: deps.dispatch.recovery,
      clock: deps.clock,
      retentionMs: this.#opts.retentionMs as DurationMs,
      log: this.#log,
      stopping: () => this.#stopped(),
    });
    this.#rounds = new AdmissionRounds({
      admission: deps.dispatch.admission,
      claims: deps.dispatch.claims,
      budget: deps.dispatch.budget,
      clock: deps.clock,
      replicaId: deps.replicaId,
      handlerNames: deps.handlerNames,
      log: this.#log,
      events: this.#events,
      tracer: this.#tracer,
      settings: this.#opts,
      options: deps.options,
      launches: this.#launches,
      stopped: () => this.#stopped(),
      cancelTarget: (run, task) => {
        this.#cancelTarget(run, task);
      },
      cover: this.#heartbeat,
      claiming: () => {
        this.#claimTrigger.claiming();
      },
      admitted: (queued, claimed) => {
        this.#announceQueued(queued, claimed);
      },
    });
    this.#claimTrigger = new ClaimTrigger({
      clock: deps.clock,
      usefulBatch: () =>
        Math.min(
          this.#opts.claimBatch,
          Math.max(1, Math.ceil(deps.dispatch.budget.policy.maxConcurrentRuns / 4)),
        ),
      idle: () =>
        this.#launches.size === 0 && (deps.inProcess?.running ?? 0) <= this.#launches.reporting,
      claim: () => {
        this.#wake.wakeClaim();
      },
    });
  }

  /** The wake signal: `wake()` makes the loop tick at once. */
  get wakeSignal(): WakeSignal {
    return this.#wake;
  }

  /** When this replica's last answered heartbeat was sent, or null before the first. */
  get lastHeartbeatAt(): Instant | null {
    return this.#heartbeat.lastBeatAt;
  }

  /** This replica's id (in run claims and heartbeats). */
  get replicaId(): string {
    return this.#deps.replicaId;
  }

  /** The tuning in force, every default filled in (docs/operations.md#thresholds). */
  get settings(): Readonly<Required<CoordinatorOptions>> {
    return this.#opts;
  }

  /** Launches currently in flight on this replica. */
  get inFlight(): number {
    return this.#launches.size;
  }

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.#loop !== null || this.#stopping !== null) return;
    this.#loop = this.#run();
    this.#heartbeat.start();
    this.#deps.watcher?.start();
  }

  /**
   * Hears other replicas' wake-ups through the store, when it offers them, until `stop()`; call it before
   * `start()`. Idempotent. @throws when the store cannot listen at all (it keeps listening once it has)
   */
  async listen(): Promise<void> {
    const wakes = this.#deps.wakes;
    if (wakes === undefined || this.#stopping !== null) return;
    this.#listening ??= wakes.subscribe(
      (hint, from) => {
        // Another replica queued more runs than it claims at once: claim now (this replica's own
        // announcement is not for it). Runs changed elsewhere (slots freed, a run queued again):
        // counted as a free for a claim.
        if (hint === "queued") {
          if (from !== this.#deps.replicaId) this.#wake.wakeClaim();
        } else if (hint === "runs") this.#claimTrigger.freed();
        else this.#wake.wake();
      },
      (error) => {
        this.#log.warn(
          { err: error },
          "the wake-up connection was lost; listening again (the tick's polling covers the gap)",
        );
      },
    );
    await this.#listening;
  }

  /**
   * An admission batch queued `queued` runs and this replica's claims after it took `claimed`: when
   * some are left, the other replicas are told, so that an idle one claims them at once instead of
   * waiting for a freed slot or its next pass (docs/operations.md#which-replica-runs-what). Sent once
   * this replica's claims are done, not before: a claim that overlaps another may find the runs it
   * wanted locked by it and claim none.
   */
  #announceQueued(queued: number, claimed: number): void {
    const wakes = this.#deps.wakes;
    if (wakes?.announceQueued === undefined || claimed >= queued) return;
    void this.#background.track(
      wakes.announceQueued(this.#deps.replicaId),
      { queued },
      "could not tell the other replicas that runs were queued: they claim them at their next pass",
    );
  }

  /** Stops: no new claims or admissions, in-flight launches drained within the timeout. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  /**
   * One full pass: admit, sweep, claim and launch. The loop calls it; tests and `punctual/testing` may
   * call it directly. Resolves when the pass's writes are done (launches may still be in flight).
   */
  async tick(): Promise<void> {
    // Wall time, not the clock's: a pass's cost, which a virtual clock would not show.
    const started = performance.now();
    try {
      await this.#pass();
    } finally {
      this.#events.emit("coordinator:tick", { durationMs: performance.now() - started });
    }
  }

  async #pass(): Promise<void> {
    const { dispatch, clock, replicaId } = this.#deps;
    const { recovery, budget } = dispatch;
    await this.#clockCorrection?.check();
    await this.#heartbeat.passBeat();
    if (this.#stopped()) return;
    if (!this.#orphansSwept) {
      await sweepOrphans({ recovery, clock, replicaId, log: this.#log }, this.#deps.inProcess);
      this.#orphansSwept = true;
    }
    // Sweep before claiming: a run past its queue timeout is skipped rather than launched, and slots
    // freed by deadlines and reconciled claims are used in the same tick.
    if (clock.now() - this.#lastSweepAt >= this.#opts.sweepMs) {
      this.#lastSweepAt = clock.now();
      await sweep({
        recovery,
        budget,
        launcher: this.#deps.launcher,
        clock,
        log: this.#log,
        startRetention: () => {
          const round = this.#retention.start();
          if (round !== null) {
            void this.#background.track(round, {}, "retention failed: the next sweep tries again");
          }
        },
        replicaId,
        handlerNames: this.#deps.handlerNames,
        judgesSilence: this.#heartbeat.judgesSilence(),
        events: this.#events,
        launching: (runId) => this.#launches.has(runId),
        cancelTarget: (run, task) => {
          this.#cancelTarget(run, task);
        },
      });
      await this.#checkHolidays();
    }
    await this.#rounds.admitAndClaim();
  }

  /** Waits until every launch in flight, every verdict reported and every background write has settled. */
  async settle(): Promise<void> {
    while (this.#launches.size > 0 || this.#launches.reporting > 0 || this.#background.size > 0) {
      await Promise.allSettled([
        ...this.#launches.pending,
        this.#launches.allReported(),
        ...this.#background.pending,
      ]);
    }
  }

  /**
   * Records a verdict that arrives after launch (handler targets, webhook callbacks). It is queued behind
   * the run's launch answer (written in the same batch or a later one, in order), so a fast verdict
   * never lands before its launch. `attempt` (a handler's verdict) fences it: once this replica was
   * declared lost and the run moved on to another attempt, the verdict is refused
   * (docs/operations.md#replica-liveness-what-silent-means).
   */
  reportCompletion(runId: RunId, verdict: CompletionVerdict, attempt?: number): Promise<void> {
    return this.#launches.reportCompletion(runId, verdict, attempt);
  }

  /** A handler run handed back at shutdown (while still at `attempt`): queued again, no retry used. */
  reportLost(runId: RunId, attempt?: number): Promise<void> {
    const write = this.#deps.dispatch.runWrites.recordHandBack(
      runId,
      this.#deps.clock.now(),
      attempt,
    );
    return this.#background.track(write, { runId }, "could not record a lost handler run");
  }

  async #run(): Promise<void> {
    const signal = this.#stopController.signal;
    while (!signal.aborted) {
      // This pass serves every wake-up raised so far.
      this.#wake.take();
      let wake = this.#wake.nextWake();
      let sleepUntil: Instant;
      try {
        // A store that answers synchronously (SQLite) would otherwise keep this loop on the CPU while
        // work keeps arriving, starving HTTP, timers and signals: let the event loop turn first.
        await yieldToEventLoop();
        const tickedAt = this.#deps.clock.now();
        await this.tick();
        sleepUntil = await this.#nextWakeAt(tickedAt);
        if (this.#errorStreak > 0) {
          this.#log.info({ failures: this.#errorStreak }, "coordinator recovered");
          this.#errorStreak = 0;
        }
      } catch (error) {
        this.#errorStreak++;
        this.#events.emit("store:failed", { operation: "tick" });
        if (this.#errorStreak === 1)
          this.#log.error({ err: error }, "coordinator tick failed; backing off");
        sleepUntil = (this.#deps.clock.now() + this.#backoffMs()) as Instant;
      }
      // Sleep until the next pass; wake-ups that ask only for a claim are served without one.
      for (;;) {
        if (this.#stopped()) return;
        await this.#deps.clock.sleepUntil(sleepUntil, AbortSignal.any([signal, wake]));
        if (!wake.aborted || this.#wake.take() !== "claim") break;
        wake = this.#wake.nextWake();
        await this.#claimOnly();
      }
    }
  }

  /** A claim without a pass (slots were freed); a failure is logged and left to the next pass. */
  async #claimOnly(): Promise<void> {
    try {
      await yieldToEventLoop();
      await this.#rounds.claim();
    } catch (error) {
      this.#events.emit("store:failed", { operation: "tick" });
      this.#log.warn({ err: error }, "a claim failed; the next pass claims again");
    }
  }

  #stopped(): boolean {
    return this.#stopController.signal.aborted;
  }

  /** Exponential back-off with jitter for a failing loop: 0.5 s doubling to 30 s. */
  #backoffMs(): number {
    const base = exponentialBackoffMs(this.#errorStreak - 1, 500, 30_000);
    return base / 2 + Math.random() * (base / 2);
  }

  /** When to tick next, given when the tick that just ended started. */
  async #nextWakeAt(tickedAt: Instant): Promise<Instant> {
    const now = this.#deps.clock.now();
    const tickAt = (now + this.#opts.tickMs) as Instant;
    if (this.#rounds.moreDue) return now;
    const next = await this.#deps.dispatch.wakeUps.nextWakeAt();
    if (next === null || next >= tickAt) return tickAt;
    if (next > now) return next;
    // Due already. If it came due after the tick looked, tick again at once; if it was due when the
    // tick looked, it is waiting for something (the budget, a busy thread): the tick bounds the retry.
    return next > tickedAt ? now : tickAt;
  }

  /**
   * The first sweep of each UTC day (on the runtime's clock) extends the calendars following a region's
   * holidays (docs/schedules.md#holidays); one that cannot be extended is logged and tried the next day.
   */
  async #checkHolidays(): Promise<void> {
    const upkeep = this.#deps.holidayUpkeep;
    const now = this.#deps.clock.now();
    const day = Math.floor(now / DAY_MS);
    if (upkeep === undefined || day === this.#holidayCheckDay) return;
    this.#holidayCheckDay = day;
    try {
      const { extended, failed } = await upkeep(now);
      for (const { owner, name, throughYear } of extended) {
        this.#log.info(
          { owner, calendar: name, throughYear },
          "a holiday calendar took later years",
        );
      }
      for (const { owner, name, error } of failed) {
        this.#log.warn(
          { owner, calendar: name, err: error },
          "a holiday calendar could not take later years: tomorrow's check tries again",
        );
      }
    } catch (error) {
      this.#log.warn({ err: error }, "the holiday check failed: tomorrow's check tries again");
    }
  }

  /** Asks a run's target to stop (a cancel requested through the service, or by a sweep). */
  requestCancel(run: Run, task: Task | null): void {
    this.#cancelTarget(run, task);
  }

  #cancelTarget(run: Run, task: Task | null): void {
    const cancel = async (): Promise<void> => {
      const owner = task ?? (await this.#deps.dispatch.runWrites.findTaskOf(run));
      if (owner !== null) await this.#deps.launcher.cancel(run, owner);
    };
    void this.#background.track(
      cancel(),
      { runId: run.id },
      "could not ask the target to cancel a run",
    );
  }

  async #shutdown(): Promise<void> {
    this.#stopController.abort();
    this.#claimTrigger.stop();
    await Promise.all([this.#loop?.catch(() => undefined), this.#deps.watcher?.stop()]);
    await drainForShutdown({
      clock: this.#deps.clock,
      log: this.#log,
      inProcess: this.#deps.inProcess,
      timeoutMs: this.#opts.shutdownTimeoutMs,
      settle: () => this.settle(),
      inFlight: () => this.#launches.size,
    });
    // Writes still retrying give up now: their claims expire and runs are reconciled or time out.
    this.#drainDeadline.abort();
    // Silent from here: what is left of this replica's work is the other replicas' to take over.
    await this.#heartbeat.stop();
    // A subscription that never listened has nothing to end.
    const stopListening = await this.#listening?.catch(() => null);
    await stopListening?.();
  }
}
