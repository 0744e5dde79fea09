/**
 * Runs in memory: scoped reads, the claim round (memory-claim.ts), the fenced run writes
 * (memory-fenced-run-writes.ts), the sweeps and retention (memory-run-sweeps.ts) and the no-handler
 * sweep's find (memory-unserved-runs.ts), each one atomic transaction over `MemoryTables`. The
 * reference semantics of `RunRepository`.
 */
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
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
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { MemoryClaim } from "./memory-claim.js";
import { MemoryFencedRunWrites } from "./memory-fenced-run-writes.js";
import { isVisibleTo } from "./memory-scope.js";
import { searchMemoryRuns } from "./memory-run-search.js";
import { MemoryRunSweeps } from "./memory-run-sweeps.js";
import { taskOfRun } from "./memory-tables.js";
import { manualKey } from "./memory-unique-keys.js";
import { MemoryUnservedRuns } from "./memory-unserved-runs.js";
import type { MemoryTables } from "./memory-tables.js";

function historyKey(run: Run): CursorKey {
  return [run.scheduledFor, run.id];
}

export class MemoryRunRepository implements RunRepository {
  readonly #tables: MemoryTables;
  readonly #claim: MemoryClaim;
  readonly #fenced: MemoryFencedRunWrites;
  readonly #sweeps: MemoryRunSweeps;
  readonly #unserved: MemoryUnservedRuns;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
    this.#claim = new MemoryClaim(tables);
    this.#fenced = new MemoryFencedRunWrites(tables);
    this.#sweeps = new MemoryRunSweeps(tables);
    this.#unserved = new MemoryUnservedRuns(tables);
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

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    return this.#fenced.changeRuns(requests);
  }

  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return this.#tables.atomically(() => this.#sweeps.runningRuns(targetKind, after, limit));
  }

  findExpiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]> {
    return this.#tables.atomically(() => this.#sweeps.expiredClaims(now, limit, silentSince));
  }

  findPastDeadline(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() => this.#sweeps.pastDeadline(now, limit));
  }

  findQueueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() => this.#sweeps.queueTimeouts(now, limit));
  }

  findUnservedHandlerRuns(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]> {
    return this.#tables.atomically(() => this.#unserved.find(dueBefore, served, limit));
  }

  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#tables.atomically(() => this.#sweeps.lostHandlerRuns(silentSince, limit));
  }

  purge(before: Instant, limit: number): Promise<number> {
    return this.#tables.atomically(() => this.#sweeps.purge(before, limit));
  }

  queueStats(now: Instant): Promise<QueueStats> {
    return this.#tables.atomically(() => this.#sweeps.queueStats(now));
  }

  nextRunWakeAt(): Promise<Instant | null> {
    return this.#tables.atomically(() => this.#sweeps.nextRunWakeAt());
  }

  #taskOf(run: Run): Task {
    return taskOfRun(this.#tables, run);
  }
}
