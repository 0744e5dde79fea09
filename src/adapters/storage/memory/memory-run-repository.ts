/**
 * Runs in memory: scoped reads, the claim round (memory-claim.ts), the fenced run writes
 * (memory-fenced-run-writes.ts), the sweeps and retention, each one atomic transaction over
 * `MemoryTables`. The reference semantics of `RunRepository`.
 */
import type { FencingToken, OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import type {
  ClaimedRun,
  ClaimRequest,
  RunChangeRequest,
  RunChangeResult,
  RunRepository,
  QueueStats,
  UnservedRun,
} from "../../../domain/ports/run-repository.js";
import type { OwnerScope, Page, RunQuery, RunSearch } from "../../../domain/ports/queries.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Run, RunTrigger } from "../../../domain/run.js";
import { holdsSlot, isTerminalRunStatus } from "../../../domain/run.js";
import type { RunChange } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { compareKeys, decodeCursor, pageOf } from "../shared/page-cursor.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { MemoryClaim } from "./memory-claim.js";
import { MemoryFencedRunWrites } from "./memory-fenced-run-writes.js";
import { isVisibleTo } from "./memory-scope.js";
import { searchMemoryRuns } from "./memory-run-search.js";
import { taskOfRun } from "./memory-tables.js";
import { manualKey } from "./memory-unique-keys.js";
import type { MemoryTables } from "./memory-tables.js";

function historyKey(run: Run): CursorKey {
  return [run.scheduledFor, run.id];
}

/** Orders by `at` (nulls never reach here), then by id. */
function byInstant(at: (run: Run) => Instant | null): (a: Run, b: Run) => number {
  return (a, b) => compareKeys([at(a) ?? 0, a.id], [at(b) ?? 0, b.id]);
}

function earliest(a: Instant | null, b: Instant | null): Instant | null {
  if (a === null) return b;
  if (b === null) return a;
  return a <= b ? a : b;
}

export class MemoryRunRepository implements RunRepository {
  readonly #tables: MemoryTables;
  readonly #claim: MemoryClaim;
  readonly #fenced: MemoryFencedRunWrites;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
    this.#claim = new MemoryClaim(tables);
    this.#fenced = new MemoryFencedRunWrites(tables);
  }

  findRun(scope: OwnerScope, id: RunId): Promise<Run | null> {
    return this.#tables.atomically(() => {
      const run = this.#tables.run(id);
      return run !== undefined && isVisibleTo(scope, run.owner) ? run : null;
    });
  }

  countRecentRuns(owner: OwnerId, trigger: RunTrigger, since: Instant): Promise<number> {
    return this.#tables.atomically(
      () =>
        [...this.#tables.runs()].filter(
          (run) => run.owner === owner && run.trigger === trigger && run.queuedAt >= since,
        ).length,
    );
  }

  findManualRun(taskId: TaskId, idempotencyKey: string): Promise<Run | null> {
    return this.#tables.atomically(
      () => this.#tables.holder("runs_manual_key_uq", manualKey(taskId, idempotencyKey)) ?? null,
    );
  }

  findRunWithTask(id: RunId): Promise<ClaimedRun | null> {
    return this.#tables.atomically(() => {
      const run = this.#tables.run(id);
      return run === undefined ? null : { run, task: this.#taskOf(run) };
    });
  }

  listRuns(scope: OwnerScope, taskId: TaskId, query: RunQuery): Promise<Page<Run>> {
    return this.#tables.atomically(() => {
      const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
      // Newest first from the cursor, one row past the page: it tells whether another page follows.
      const rows: Run[] = [];
      for (const run of this.#tables.runsNewestFirst(taskId, before)) {
        if (!isVisibleTo(scope, run.owner)) continue;
        if (query.status !== undefined && run.status !== query.status) continue;
        if (query.trigger !== undefined && run.trigger !== query.trigger) continue;
        rows.push(run);
        if (rows.length > query.limit) break;
      }
      return pageOf(rows, query.limit, historyKey);
    });
  }

  searchRuns(scope: OwnerScope, search: RunSearch): Promise<Page<Run>> {
    return this.#tables.atomically(() => searchMemoryRuns(this.#tables, scope, search));
  }

  claimRuns(
    request: ClaimRequest,
    select: Parameters<RunRepository["claimRuns"]>[1],
    claim: Parameters<RunRepository["claimRuns"]>[2],
  ): Promise<readonly ClaimedRun[]> {
    return this.#claim.claimRuns(request, select, claim);
  }

  changeRun(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null> {
    return this.#fenced.changeRun(id, guard, decide);
  }

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    return this.#fenced.changeRuns(requests);
  }

  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return this.#tables.atomically(() =>
      this.#tables
        .activeRuns()
        .filter((run) => run.status === "running" && (after === null || run.id > after))
        .map((run) => ({ run, task: this.#taskOf(run) }))
        .filter(({ task }) => task.target.kind === targetKind)
        .sort((a, b) => (a.run.id < b.run.id ? -1 : a.run.id > b.run.id ? 1 : 0))
        .slice(0, Math.max(0, limit)),
    );
  }

  findExpiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]> {
    const silent = (run: Run): boolean => {
      if (silentSince === undefined || run.claimedBy === null) return false;
      const replica = this.#tables.replica(run.claimedBy);
      return replica !== undefined && replica.heartbeatAt < silentSince;
    };
    return this.#tables.atomically(() => {
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
    });
  }

  findPastDeadline(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() =>
      this.#tables
        .activeRuns()
        .filter((run) => holdsSlot(run.status))
        .filter((run) => run.deadlineAt !== null && run.deadlineAt < now)
        .sort(byInstant((run) => run.deadlineAt))
        .slice(0, Math.max(0, limit))
        .map((run) => run.id),
    );
  }

  findQueueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() =>
      this.#tables
        .activeRuns()
        .filter((run) => run.status === "queued")
        // The timeout is read from the task's current options (a join), not copied onto the run.
        .filter((run) => run.queuedAt + this.#taskOf(run).options.queueTimeoutMs < now)
        .sort(byInstant((run) => run.queuedAt))
        .slice(0, Math.max(0, limit))
        .map((run) => run.id),
    );
  }

  findUnservedHandlerRuns(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]> {
    return this.#tables.atomically(() =>
      this.#tables
        .activeRuns()
        .filter((run) => run.status === "queued" && run.notBefore < dueBefore)
        .map((run) => ({ run, target: this.#taskOf(run).target }))
        .filter(({ target }) => target.kind === "handler" && !served.includes(target.name))
        .sort((a, b) => a.run.notBefore - b.run.notBefore || (a.run.id < b.run.id ? -1 : 1))
        .slice(0, Math.max(0, limit))
        .map(({ run, target }) => ({
          id: run.id,
          handlerName: target.kind === "handler" ? target.name : "",
        })),
    );
  }

  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() =>
      this.#tables
        .activeRuns()
        .filter((run) => run.status === "running" && this.#taskOf(run).target.kind === "handler")
        .filter((run) => {
          const replica = run.claimedBy === null ? undefined : this.#tables.replica(run.claimedBy);
          return replica === undefined || replica.heartbeatAt < silentSince;
        })
        .sort(byInstant((run) => run.launchedAt))
        .slice(0, Math.max(0, limit))
        .map((run) => run.id),
    );
  }

  purge(before: Instant, limit: number): Promise<number> {
    return this.#tables.atomically(() => {
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
    });
  }

  queueStats(now: Instant): Promise<QueueStats> {
    return this.#tables.atomically(() => {
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
    });
  }

  nextRunWakeAt(): Promise<Instant | null> {
    return this.#tables.atomically(() => {
      let wake: Instant | null = null;
      for (const run of this.#tables.activeRuns()) {
        if (run.status === "queued") wake = earliest(wake, run.notBefore);
        if (run.status === "launching") wake = earliest(wake, run.claimExpiresAt);
        if (run.status === "running") wake = earliest(wake, run.deadlineAt);
      }
      return wake;
    });
  }

  #taskOf(run: Run): Task {
    return taskOfRun(this.#tables, run);
  }
}
