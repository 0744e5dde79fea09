/**
 * Runs in memory: scoped reads, claims within the global budget, fenced changes and the sweeps, each one
 * atomic transaction over `MemoryTables`. The reference semantics of `RunRepository`.
 */
import { randomUUID } from "node:crypto";
import type { ClaimCandidate, ClaimSelectionInput } from "../../../domain/claim.js";
import { ownerMaxActiveRuns, threadKey } from "../../../domain/claim.js";
import { LeaseLostError, NotFoundError } from "../../../domain/errors.js";
import type { FencingToken, OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import { fencingToken } from "../../../domain/ids.js";
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
import { runTaskContext, withTaskPatches } from "../../../domain/run-change.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { compareKeys, decodeCursor, pageOf } from "../shared/page-cursor.js";
import { applyRunChanges, batchRunIds } from "../shared/run-change-batch.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { runRow, taskRow } from "./memory-rows.js";
import { isVisibleTo } from "./memory-scope.js";
import { searchMemoryRuns } from "./memory-run-search.js";
import { ConstraintViolationError } from "./memory-tables.js";
import { manualKey } from "./memory-unique-keys.js";
import type { MemoryTables } from "./memory-tables.js";

/** Launching or running runs by owner. */
function countByOwner(runs: readonly Run[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(run.owner, (counts.get(run.owner) ?? 0) + 1);
  return counts;
}

/** A claim these keys refuse is skipped: another run holds the task's or the thread's slot. */
const SLOT_KEYS: readonly string[] = ["runs_task_slot_uq", "runs_thread_slot_uq"];

/** Claims look at this many queued runs at least: a prefix in global order holds every thread's head. */
const MIN_CLAIM_WINDOW = 1000;

function historyKey(run: Run): CursorKey {
  return [run.scheduledFor, run.id];
}

function handlerNameOf(task: Task): string | null {
  return task.target.kind === "handler" ? task.target.name : null;
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

  constructor(tables: MemoryTables) {
    this.#tables = tables;
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
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
  ): Promise<readonly ClaimedRun[]> {
    return this.#tables.atomically(() => {
      const active = this.#tables.activeRuns();
      const slots = active.filter((run) => holdsSlot(run.status));
      const budget = Math.max(0, Math.min(request.maxConcurrentRuns - slots.length, request.limit));
      const window = Math.max(4 * request.limit, MIN_CLAIM_WINDOW);
      const candidates = this.#ownerHeads(active, window);
      const offered = new Set(candidates.map((candidate) => candidate.id));
      // A cancelled run whose target was not told holds its thread and task until its deadline.
      const holding = [
        ...slots,
        ...this.#tables.heldRuns().filter((run) => (run.deadlineAt ?? 0) > request.now),
      ];
      const chosen = select({
        candidates,
        busyThreads: new Set(holding.map((run) => threadKey(run.threadScope, run.threadId))),
        busyTasks: new Set(holding.filter((run) => run.exclusive).map((run) => run.taskId)),
        budget,
        ownerActive: countByOwner(slots),
      });
      const claimed: ClaimedRun[] = [];
      const held = countByOwner(slots);
      for (const candidate of chosen) {
        // The budget and the owners' shares are the store's to keep, whatever `select` returned.
        if (claimed.length >= budget) break;
        const owned = held.get(candidate.owner) ?? 0;
        if (
          request.share !== undefined &&
          owned >= ownerMaxActiveRuns(request.share, candidate.owner)
        ) {
          continue;
        }
        const run = this.#tables.run(candidate.id);
        if (!offered.has(candidate.id) || run?.status !== "queued") continue;
        offered.delete(candidate.id);
        const task = this.#taskOf(run);
        const row = runRow(claim(run, task, fencingToken(randomUUID())));
        if (this.#writeClaim(row)) {
          claimed.push({ run: row, task });
          held.set(candidate.owner, owned + 1);
        }
      }
      return claimed;
    });
  }

  changeRun(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null> {
    return this.#tables.atomically(() => {
      const run = this.#tables.run(id);
      if (run === undefined) throw new NotFoundError("run", id);
      if (guard.token !== undefined && run.claimToken !== guard.token) {
        throw new LeaseLostError(`the claim on run ${id} was superseded or released`);
      }
      const task = this.#taskOf(run);
      const change = decide(run, task);
      if (change === null) return null;
      const row = runRow({ ...change.run, id });
      this.#tables.putRun(row);
      const launch = change.taskLaunch;
      const verdict = change.taskVerdict;
      if (launch !== undefined || verdict !== undefined) {
        this.#tables.putTask(taskRow(withTaskPatches(task, change)));
      }
      return { ...change, run: row };
    });
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

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    return this.#tables.atomically(() => {
      const runs = new Map<RunId, Run>();
      const tasks = new Map<TaskId, Task>();
      for (const id of batchRunIds(requests)) {
        const run = this.#tables.run(id);
        if (run === undefined) continue;
        runs.set(id, run);
        tasks.set(run.taskId, this.#taskOf(run));
      }
      const contexts = new Map<TaskId, RunTaskContext>();
      for (const [id, task] of tasks) contexts.set(id, runTaskContext(task));
      const applied = applyRunChanges(requests, runs, contexts);
      for (const { after } of applied.runs) this.#tables.putRun(runRow(after));
      for (const entry of applied.tasks) {
        const task = tasks.get(entry.taskId);
        if (task === undefined) continue;
        this.#tables.putTask(
          taskRow({
            ...task,
            ...(entry.launch === null
              ? {}
              : { lastRunAt: entry.launch.lastRunAt, lastRunId: entry.launch.lastRunId }),
            runCount: task.runCount + entry.launches,
            ...(entry.verdict === null
              ? {}
              : {
                  lastError: entry.verdict.lastError,
                  status: entry.verdict.status ?? task.status,
                }),
          }),
        );
      }
      return applied.results;
    });
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

  /** Writes a claimed run; false when a slot key refuses it (that run is skipped, not an error). */
  #writeClaim(run: Run): boolean {
    try {
      this.#tables.putRun(run);
      return true;
    } catch (error) {
      if (error instanceof ConstraintViolationError && SLOT_KEYS.includes(error.constraint)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Each owner's first `window` queued runs in claim order (docs/semantics.md#fair-share), each marked
   * `queuedBehind` when an earlier queued run of its thread (or exclusive task) is not among them.
   */
  #ownerHeads(active: readonly Run[], window: number): ClaimCandidate[] {
    const queued = active
      .filter((run) => run.status === "queued")
      .sort((a, b) => a.queuedAt - b.queuedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const threads = new Set<string>();
    const tasks = new Set<TaskId>();
    const taken = new Map<string, number>();
    const heads: ClaimCandidate[] = [];
    // `window` runs in all, at least one per owner, as the database stores read.
    const owners = new Set(queued.map((run) => run.owner)).size;
    const perOwner = Math.max(1, Math.ceil(window / Math.max(1, owners)));
    for (const run of queued) {
      const thread = threadKey(run.threadScope, run.threadId);
      const behind = threads.has(thread) || (run.exclusive && tasks.has(run.taskId));
      threads.add(thread);
      if (run.exclusive) tasks.add(run.taskId);
      const count = taken.get(run.owner) ?? 0;
      if (count >= perOwner) continue;
      taken.set(run.owner, count + 1);
      heads.push({ ...this.#candidate(run), ...(behind ? { queuedBehind: true } : {}) });
    }
    return heads;
  }

  #candidate(run: Run): ClaimCandidate {
    return {
      id: run.id,
      taskId: run.taskId,
      owner: run.owner,
      threadScope: run.threadScope,
      threadId: run.threadId,
      exclusive: run.exclusive,
      notBefore: run.notBefore,
      queuedAt: run.queuedAt,
      handlerName: handlerNameOf(this.#taskOf(run)),
    };
  }

  #taskOf(run: Run): Task {
    const task = this.#tables.task(run.taskId);
    // A task row outlives its runs (purge deletes the runs first), so a run always finds its task.
    if (task === undefined)
      throw new Error(`memory store: run ${run.id} has no task ${run.taskId}`);
    return task;
  }
}
