/**
 * The coordinator's admit-and-claim rounds (docs/architecture.md#cadence): due tasks are admitted batch
 * by batch, and after each batch queued runs are claimed within the budget and handed to the launches
 * in flight (launches.ts), so a burst starts launching once its first batch is decided. A task whose
 * stored fields do not parse is reported once, and the runs an admission cancels are handed on for
 * their targets to be told. It remembers whether the last admission stopped with tasks still due.
 */
import type { AdmitDue } from "../application/dispatch/admit-due.js";
import type { PolicyInForce } from "../application/dispatch/budget-holder.js";
import type { ClaimRuns } from "../application/dispatch/claim-runs.js";
import type { Logger } from "../application/events/logger.js";
import type { EventSink } from "../application/events/internal-events.js";
import { startSpanLazily } from "../application/events/tracing.js";
import type { TraceSpan, Tracer } from "../application/events/tracing.js";
import type { ClaimedRun } from "../domain/ports/run-repository.js";
import type { Run } from "../domain/run.js";
import type { Task } from "../domain/task.js";
import type { Instant } from "../domain/time.js";
import { startTimer } from "./clock.js";
import type { Clock } from "./clock.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import { inSpan } from "./in-span.js";
import type { Launches } from "./launches.js";

/**
 * How long an admission round waits, at most, for this replica's verdicts being written before it
 * admits (`AdmissionRounds.#verdictsWritten`): about one write batch's round trip under load.
 */
export const VERDICT_WAIT_MS = 50;

/**
 * How long after a fused admission came back short of the room it offered (the budget was full: its
 * runs were queued) the rounds keep waiting for this replica's verdict writes (`#verdictsWritten`).
 */
export const SHORT_BUDGET_MEMORY_MS = 10_000;

export interface AdmissionRoundsDeps {
  readonly admission: AdmitDue;
  readonly claims: ClaimRuns;
  readonly budget: PolicyInForce;
  readonly clock: Clock;
  readonly replicaId: string;
  /** Handler names this replica can run. */
  readonly handlerNames: ReadonlySet<string>;
  readonly log: Logger;
  /** Receives `coordinator:admission` and `coordinator:claim`. */
  readonly events: EventSink;
  readonly tracer: Tracer;
  /** The tuning in force, every default filled in. */
  readonly settings: Required<CoordinatorOptions>;
  /** The tuning as given: an unset `maxInFlight` follows the budget in force. */
  readonly options: CoordinatorOptions | undefined;
  readonly launches: Launches;
  /** Whether the coordinator is stopping: no new claims or admissions. */
  readonly stopped: () => boolean;
  /** Asks a run's target to stop (the task, when the caller has it). */
  readonly cancelTarget: (run: Run, task: Task | null) => void;
  /** This replica's heartbeat cover (replica-heartbeat.ts): claims answered outside it are not launched. */
  readonly cover: { readonly cover: number; covers(cover: number): boolean };
  /** A claim starts: the frees gathered for one (claim-trigger.ts) are used by it. @default none */
  readonly claiming?: () => void;
  /** An admission batch queued `queued` runs, and the claims after it took `claimed`. @default none */
  readonly admitted?: (queued: number, claimed: number) => void;
}

export class AdmissionRounds {
  readonly #deps: AdmissionRoundsDeps;
  /** The last admission stopped at its round limit with tasks still due. */
  #moreDue = false;
  /** The store has answered an admission with `claimed`: it fuses the claim in. */
  #storeFuses = false;
  /** When a fused admission last claimed less than the room it offered and queued the rest. */
  #shortAt: number | null = null;

  constructor(deps: AdmissionRoundsDeps) {
    this.#deps = deps;
  }

  /** Whether the last admission stopped at its round limit with tasks still due. */
  get moreDue(): boolean {
    return this.#moreDue;
  }

  /**
   * Admits due tasks batch by batch and claims after each batch, so a burst starts launching once its
   * first batch is decided rather than once every batch is (the claim also takes runs queued earlier).
   */
  async admitAndClaim(): Promise<void> {
    const { admission, clock, settings, events } = this.#deps;
    this.#moreDue = false;
    for (let round = 0; round < settings.admissionRounds; round++) {
      if (this.#deps.stopped()) return;
      if (round > 0) await yieldToEventLoop();
      const admitStarted = performance.now();
      const now = clock.now();
      // Decided at `now` whatever the wait below: it frees this replica's slots, never moves the instant.
      await this.#verdictsWritten();
      if (this.#deps.stopped()) return;
      // The runs this replica can launch at once are claimed in the admitting transaction, where the
      // store can (docs/storage.md#fused-admit-and-claim): within the room a claim would have.
      const room = this.#claimRoom();
      const fused =
        room > 0
          ? this.#deps.claims.admissionClaim({
              now,
              replicaId: this.#deps.replicaId,
              limit: room,
              handlerNames: this.#deps.handlerNames,
            })
          : undefined;
      const limit = this.#admissionLimit(fused === undefined ? 0 : room);
      const cover = this.#deps.cover.cover;
      if (fused !== undefined) this.#deps.claiming?.();
      const admitSpan = startSpanLazily(this.#deps.tracer, "punctual.admission", () => ({
        "punctual.admission.limit": limit,
      }));
      const report = await inSpan(
        admitSpan,
        () => admission.admitDue(now, limit, fused),
        (admitted) => ({
          "punctual.admission.tasks": admitted.tasks,
          "punctual.claim.runs": admitted.claimed?.length ?? 0,
        }),
      );
      events.emit("coordinator:admission", {
        durationMs: performance.now() - admitStarted,
        tasks: report.tasks,
      });
      for (const run of report.cancellations) this.#deps.cancelTarget(run, null);
      for (const task of report.defective) this.#reportDefect(task);
      let shortOfRoom = false;
      if (report.claimed !== undefined) {
        this.#storeFuses = true;
        const short = report.claimed.length < report.queuedRuns.length;
        shortOfRoom = short && report.claimed.length < room;
        if (shortOfRoom) this.#shortAt = clock.now();
      }
      const claimed = report.claimed ?? [];
      if (claimed.length > 0) {
        this.#deps.claims.announce(claimed);
        // Launched (or handed back) even when stopping: they are claimed, as a claim's answer is.
        if (!this.#launchClaimed(claimed, cover, admitSpan)) return;
      }
      if (this.#deps.stopped()) return;
      // A round short of its room found the budget held, partly by this replica's verdicts still being
      // written: the claim of the runs it queued waits for those writes as the next round would, and
      // takes the slots they free (without the wait it found the budget full, and the queued runs
      // waited for a later claim). The launches just made answer first where they answer at once.
      if (shortOfRoom) {
        await yieldToEventLoop();
        await this.#verdictsWritten();
      }
      if (this.#deps.stopped()) return;
      const taken = fusedEveryRun(report.claimed, report.queuedRuns.length)
        ? 0
        : await this.#claimAndLaunch();
      // The runs inserted claimed are in `queuedRuns` (as decided) and were taken by this replica.
      if (report.queuedRuns.length > 0) {
        this.#deps.admitted?.(report.queuedRuns.length, claimed.length + taken);
      }
      if (report.tasks < limit) return;
    }
    // Every round came back full: more tasks are due; the loop ticks again at once.
    this.#moreDue = true;
  }

  /**
   * How many due tasks one admission round takes. A store that fuses the claim in takes about the room
   * while there is some (docs/storage.md#fused-admit-and-claim): the runs beyond it would be queued, and
   * a queued run of an owner stops the next round's runs of that owner from being fused. Never less than
   * a quarter of the batch, so that a small room does not slow the decisions; the whole batch when
   * there is no room (nothing would be fused: decisions are never held back for the budget).
   */
  #admissionLimit(room: number): number {
    const batch = this.#deps.settings.admissionBatch;
    if (!this.#storeFuses || room <= 0) return batch;
    return Math.min(batch, Math.max(room, Math.ceil(batch / 4)));
  }

  /**
   * Before a round whose claim the store fuses in: the verdicts this replica's launches answered at once
   * and queued for writing (write-behind, one batch in flight) hold budget slots until written, and a
   * round that finds the budget full queues its runs, which no replica fuses while they wait
   * (docs/storage.md#fused-admit-and-claim). So the round waits for those writes, at most
   * `VERDICT_WAIT_MS` (docs/decisions.md#an-admission-round-waits-for-its-verdicts-writes-at-most-50-ms),
   * while a fused admission came back short of its room within `SHORT_BUDGET_MEMORY_MS`: a replica
   * whose rounds always find the budget's room (one replica under a budget above a round, a steady
   * flow) never waits.
   */
  async #verdictsWritten(): Promise<void> {
    if (!this.#storeFuses || this.#shortAt === null) return;
    const { clock } = this.#deps;
    if (clock.now() - this.#shortAt > SHORT_BUDGET_MEMORY_MS) return;
    const writing = this.#deps.launches.queuedWrites();
    if (writing === null) return;
    const timer = startTimer(clock, (clock.now() + VERDICT_WAIT_MS) as Instant);
    try {
      await Promise.race([writing, timer.done]);
    } finally {
      timer.cancel();
    }
  }

  /** Once per defect: the store has taken the task out of the due set (docs/operations.md#a-task-that-does-not-parse). */
  #reportDefect(task: Task): void {
    this.#deps.log.error(
      { taskId: task.id, owner: task.owner, defect: task.defect?.fields ?? [] },
      "punctual task's stored fields do not parse: it will not run until edited",
    );
  }

  /**
   * A claim without a pass (launch slots were freed: nothing new is due): claims and launches as
   * `admitAndClaim` does after each admission batch.
   */
  async claim(): Promise<void> {
    if (this.#deps.stopped()) return;
    await this.#claimAndLaunch();
  }

  /**
   * How many runs one claim may take now: the room under this replica's in-flight cap, at most
   * `claimBatch`; none while stopping.
   */
  #claimRoom(): number {
    if (this.#deps.stopped()) return 0;
    // Unless set, the cap follows the budget in force, which the fleet's stored value may change.
    const maxInFlight =
      this.#deps.options?.maxInFlight ?? this.#deps.budget.policy.maxConcurrentRuns;
    return Math.min(maxInFlight - this.#deps.launches.size, this.#deps.settings.claimBatch);
  }

  /**
   * Launches runs claimed while this replica's heartbeat cover was `cover`; false when the answer came
   * after the cover ended (a partition, a stall): its claims may be another's by now, so none is
   * launched and each is handed back, fenced by its token.
   */
  #launchClaimed(claimed: readonly ClaimedRun[], cover: number, span: TraceSpan): boolean {
    const { launches, log } = this.#deps;
    if (!this.#deps.cover.covers(cover)) {
      if (claimed.length > 0) {
        log.warn(
          { runs: claimed.length },
          "claims answered after this replica may have been judged silent: not launched, handed back",
        );
      }
      for (const item of claimed) launches.handBack(item, "claim answered too late to launch");
      return false;
    }
    launchAll(launches, log, claimed, span);
    return true;
  }

  /**
   * Claims and launches up to `claimBatch` runs at a time while there is room: the next claim overlaps
   * the previous batch's launches and their writes instead of waiting for them.
   */
  async #claimAndLaunch(): Promise<number> {
    const { claims, clock, replicaId } = this.#deps;
    for (let taken = 0; ;) {
      const room = this.#claimRoom();
      if (room <= 0) return taken;
      const cover = this.#deps.cover.cover;
      this.#deps.claiming?.();
      const claimStarted = performance.now();
      const claimSpan = startSpanLazily(this.#deps.tracer, "punctual.claim", () => ({
        "punctual.claim.limit": room,
        "punctual.replica.id": replicaId,
      }));
      const claimed = await inSpan(
        claimSpan,
        () =>
          claims.claim({
            now: clock.now(),
            replicaId,
            limit: room,
            handlerNames: this.#deps.handlerNames,
          }),
        (runs) => ({ "punctual.claim.runs": runs.length }),
      );
      this.#deps.events.emit("coordinator:claim", {
        durationMs: performance.now() - claimStarted,
        claimed: claimed.length,
      });
      if (!this.#launchClaimed(claimed, cover, claimSpan)) return taken;
      taken += claimed.length;
      if (claimed.length < room) return taken;
      // Let the launches just started answer and queue their writes before claiming more.
      await yieldToEventLoop();
    }
  }
}

/**
 * Hands each claimed run to its launch. A hand-off that throws (a tracer or logger of the user's) must
 * not leave the runs after it claimed in silence until their lease ends and a sweep reconciles them:
 * those were never started, so they are handed back (queued again, fenced by their tokens) and counted
 * in a warn. The run whose hand-off threw may have started: it is left to its lease and the
 * reconciliation (docs/semantics.md#run-statuses), never launched twice. The error is the caller's.
 */
function launchAll(
  launches: Launches,
  log: Logger,
  claimed: readonly ClaimedRun[],
  claimSpan: TraceSpan,
): void {
  for (const [i, item] of claimed.entries()) {
    try {
      launches.start(item, claimSpan);
    } catch (error) {
      // Handed back before the warn: a logger that throws too must not strand them.
      const rest = claimed.slice(i + 1);
      for (const other of rest) launches.handBack(other, "not launched: a launch hand-off threw");
      log.warn(
        { err: error, runs: rest.length, runId: item.run.id },
        "claimed runs not launched (a launch hand-off threw): handed back; the run that threw is left to its lease",
      );
      throw error;
    }
  }
}

/**
 * Whether an admission claimed every run it queued in its own transaction. A store fuses only while no
 * queued run is ready to claim (docs/storage.md#fused-admit-and-claim), so a claim right after it would
 * find only runs queued since by others, and their writers wake the replicas for them (a queued
 * announcement, a freed slot, a retry's wake-up), the next pass at the latest: the claim is skipped
 * (docs/architecture.md#cadence).
 */
function fusedEveryRun(claimed: readonly ClaimedRun[] | undefined, queued: number): boolean {
  return claimed !== undefined && claimed.length > 0 && claimed.length === queued;
}

/** Lets I/O callbacks and timers run before the loop continues. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
