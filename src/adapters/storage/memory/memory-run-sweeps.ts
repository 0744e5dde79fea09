/**
 * The coordinator's finds in memory (docs/architecture.md#cadence): expired launch claims, running runs
 * by target kind, deadlines, queue timeouts, runs lost with their replica, retention, the queue's
 * statistics and the next instant a run needs attention. Each is called inside one atomic transaction
 * over `MemoryTables` (memory-run-repository.ts); the reference semantics of the other stores' sweeps.
 */
import type { RunId } from "../../../domain/ids.js";
import type { ClaimedRun, QueueStats } from "../../../domain/ports/run-repository.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Run } from "../../../domain/run.js";
import { holdsSlot, isTerminalRunStatus } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { compareKeys } from "../shared/page-cursor.js";
import { taskOfRun } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

/** Orders by `at` (nulls never reach here), then by id. */
function byInstant(at: (run: Run) => Instant | null): (a: Run, b: Run) => number {
  return (a, b) => compareKeys([at(a) ?? 0, a.id], [at(b) ?? 0, b.id]);
}

function earliest(a: Instant | null, b: Instant | null): Instant | null {
  if (a === null) return b;
  if (b === null) return a;
  return a <= b ? a : b;
}

export class MemoryRunSweeps {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  runningRuns(targetKind: TargetKind, after: RunId | null, limit: number): ClaimedRun[] {
    return this.#tables
      .activeRuns()
      .filter((run) => run.status === "running" && (after === null || run.id > after))
      .map((run) => ({ run, task: this.#taskOf(run) }))
      .filter(({ task }) => task.target.kind === targetKind)
      .sort((a, b) => (a.run.id < b.run.id ? -1 : a.run.id > b.run.id ? 1 : 0))
      .slice(0, Math.max(0, limit));
  }

  expiredClaims(now: Instant, limit: number, silentSince?: Instant): ClaimedRun[] {
    const silent = (run: Run): boolean => {
      if (silentSince === undefined || run.claimedBy === null) return false;
      const replica = this.#tables.replica(run.claimedBy);
      return replica !== undefined && replica.heartbeatAt < silentSince;
    };
    const launching = this.#tables
      .activeRuns()
      .filter((run) => run.status === "launching" && run.claimExpiresAt !== null)
      .sort(byInstant((run) => run.claimExpiresAt));
    const isExpired = (run: Run): boolean => (run.claimExpiresAt ?? now) < now;
    const expired = launching.filter(isExpired);
    const ofSilent = launching.filter((run) => !isExpired(run) && silent(run));
    return [...expired, ...ofSilent]
      .slice(0, Math.max(0, limit))
      .map((run) => ({ run, task: this.#taskOf(run) }));
  }

  pastDeadline(now: Instant, limit: number): RunId[] {
    return this.#tables
      .activeRuns()
      .filter((run) => holdsSlot(run.status))
      .filter((run) => run.deadlineAt !== null && run.deadlineAt < now)
      .sort(byInstant((run) => run.deadlineAt))
      .slice(0, Math.max(0, limit))
      .map((run) => run.id);
  }

  queueTimeouts(now: Instant, limit: number): RunId[] {
    return (
      this.#tables
        .activeRuns()
        .filter((run) => run.status === "queued")
        // The timeout is read from the task's current options (a join), not copied onto the run.
        .filter((run) => run.queuedAt + this.#taskOf(run).options.queueTimeoutMs < now)
        .sort(byInstant((run) => run.queuedAt))
        .slice(0, Math.max(0, limit))
        .map((run) => run.id)
    );
  }

  lostHandlerRuns(silentSince: Instant, limit: number): RunId[] {
    return this.#tables
      .activeRuns()
      .filter((run) => run.status === "running" && this.#taskOf(run).target.kind === "handler")
      .filter((run) => {
        const replica = run.claimedBy === null ? undefined : this.#tables.replica(run.claimedBy);
        return replica === undefined || replica.heartbeatAt < silentSince;
      })
      .sort(byInstant((run) => run.launchedAt))
      .slice(0, Math.max(0, limit))
      .map((run) => run.id);
  }

  purge(before: Instant, limit: number): number {
    const max = Math.max(0, limit);
    let deleted = 0;
    // Skip the scan when nothing can have expired (a replay keeps every run).
    if (before > this.#tables.oldestFinishedAt) {
      const terminal = [...this.#tables.runs()].filter(
        (run) => isTerminalRunStatus(run.status) && run.finishedAt !== null,
      );
      const expired = terminal
        .filter((run) => run.finishedAt !== null && run.finishedAt < before)
        .sort(byInstant((run) => run.finishedAt))
        .slice(0, max);
      for (const run of expired) this.#tables.deleteRun(run.id);
      deleted = expired.length;
      const kept = new Set(expired);
      this.#tables.oldestFinishedAt = terminal.reduce(
        (oldest, run) => (kept.has(run) ? oldest : Math.min(oldest, run.finishedAt ?? oldest)),
        Number.POSITIVE_INFINITY,
      );
    }
    const gone = [...this.#tables.tasks()]
      .filter((task) => task.deletedAt !== null)
      .filter((task) => this.#tables.activeRuns(task.id).length === 0)
      .sort((a, b) => compareKeys([a.deletedAt ?? 0, a.id], [b.deletedAt ?? 0, b.id]))
      .slice(0, max);
    for (const task of gone) {
      const runs = this.#tables.runsOf(task.id);
      for (const run of runs) this.#tables.deleteRun(run.id);
      this.#tables.deleteTask(task.id);
      deleted += runs.length + 1;
    }
    return deleted;
  }

  queueStats(now: Instant): QueueStats {
    let queued = 0;
    let active = 0;
    let oldestReadyAt: Instant | null = null;
    for (const run of this.#tables.activeRuns()) {
      if (run.status !== "queued") active++;
      else {
        queued++;
        if (run.notBefore <= now) oldestReadyAt = earliest(oldestReadyAt, run.notBefore);
      }
    }
    return { queued, oldestReadyAt, active };
  }

  nextRunWakeAt(): Instant | null {
    let wake: Instant | null = null;
    for (const run of this.#tables.activeRuns()) {
      if (run.status === "queued") wake = earliest(wake, run.notBefore);
      if (run.status === "launching") wake = earliest(wake, run.claimExpiresAt);
      if (run.status === "running") wake = earliest(wake, run.deadlineAt);
    }
    return wake;
  }

  #taskOf(run: Run): Task {
    return taskOfRun(this.#tables, run);
  }
}
