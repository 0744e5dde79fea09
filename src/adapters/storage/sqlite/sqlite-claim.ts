/**
 * The claim round on SQLite (docs/storage.md#the-run-model-on-sqlite): in one `BEGIN IMMEDIATE`
 * transaction, the budget count, the owners' heads of the queue with their busy threads and tasks,
 * `select`'s choice, the minted tokens and the claimed runs' writes all happen under the single write
 * lock; the partial unique indexes back that up.
 */
import type { ClaimCandidate, ClaimSelectionInput, OwnerShare } from "../../../domain/claim.js";
import { ownerMaxActiveRuns, threadKey } from "../../../domain/claim.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "../../../domain/ids.js";
import type { ClaimedRun, ClaimRequest } from "../../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { claimBudget, claimCandidateOf, claimChosen, decideClaims } from "../shared/claim-round.js";
import type { ClaimRoundReader } from "../shared/claim-round.js";
import { firstClaimWindow, fullClaimWindow, needsWiderWindow } from "../shared/claim-window.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { brokenRunKey } from "./sqlite-errors.js";
import { runFromRow, runToRow } from "./sqlite-rows.js";
import type { RunRow } from "./sqlite-rows.js";
import { RowReader } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import { taskOfRun } from "./sqlite-task-definitions.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

interface CandidateRow {
  readonly id: string;
  readonly task_id: string;
  readonly owner: string;
  readonly thread_scope: string;
  readonly thread_id: string;
  readonly exclusive: number;
  readonly not_before: number;
  readonly queued_at: number;
  readonly handler_name: string | null;
  /** 1 when the run's thread holds a slot. */
  readonly thread_busy: number;
  /** 1 when the run is exclusive and its task holds a slot. */
  readonly task_busy: number;
  /** 1 when an earlier queued run of its thread exists (of another owner: see `#ownerHeads`). */
  readonly queued_behind: number;
}

const CANDIDATE_COLUMNS: readonly (keyof CandidateRow)[] = [
  "id",
  "task_id",
  "owner",
  "thread_scope",
  "thread_id",
  "exclusive",
  "not_before",
  "queued_at",
  "handler_name",
  "thread_busy",
  "task_busy",
  "queued_behind",
];

/** A candidate row from its values in `CANDIDATE_COLUMNS` order (sqlite-row-shapes.ts says why). */
function candidateRowOf(v: readonly unknown[]): CandidateRow {
  return {
    id: v[0],
    task_id: v[1],
    owner: v[2],
    thread_scope: v[3],
    thread_id: v[4],
    exclusive: v[5],
    not_before: v[6],
    queued_at: v[7],
    handler_name: v[8],
    thread_busy: v[9],
    task_busy: v[10],
    queued_behind: v[11],
  } as CandidateRow;
}

export class SqliteClaim {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #slotsHeld: Statement<[], number>;
  readonly #candidates: RowReader<[{ owner: string; window: number; now: number }], CandidateRow>;
  readonly #queuedOwners: Statement<[], string>;
  readonly #ownerSlots: Statement<[], { owner: string; held: number }>;
  readonly #queueLook: Statement<[{ now: number; look: number }], FusedQueueRow>;
  readonly #fusedFlags: Statement<[FusedFlagsArgs], FusedFlagsRow>;
  readonly #busyExclusiveTasks: Statement<[string, number], string>;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
    definitions: SqliteTaskDefinitions;
  }) {
    const db = options.db;
    this.#tx = options.tx;
    this.#shared = options.statements;
    this.#definitions = options.definitions;
    // The budget's slots held: the rows of run_active (migration 17).
    this.#slotsHeld = db.prepare<[], number>(`SELECT count(*) FROM run_active`).pluck(true);
    // One owner's head of the queue (run_ready's key), each run with whether its thread (and, exclusive,
    // its task) holds a slot, and whether an earlier queued run of its thread exists: the lookups probe
    // run_active's key and run_active_task_uq, and run_ready_thread_idx for shared threads (a thread
    // named like a run is that run's own: its key is probed in runs) (docs/storage.md#fair-share-across-owners).
    // A cancelled run whose target was not told holds its thread and task until its deadline
    // (run_holds: docs/semantics.md#cancellation).
    this.#candidates = new RowReader<
      [{ owner: string; window: number; now: number }],
      CandidateRow
    >(
      db,
      `SELECT q.run_id AS id, q.task_id, q.owner, q.thread_scope, q.thread_id, q."exclusive",
              q.not_before, q.queued_at, t.handler_name,
              (EXISTS (SELECT 1 FROM run_active a
                        WHERE a.thread_scope = q.thread_scope AND a.thread_id = q.thread_id)
               OR EXISTS (SELECT 1 FROM run_holds h WHERE h.thread_scope = q.thread_scope
                        AND h.thread_id = q.thread_id AND h.deadline_at > @now)) AS thread_busy,
              (q."exclusive" = 1 AND (EXISTS (SELECT 1 FROM run_active a
                        WHERE a.task_id = q.task_id AND a."exclusive" = 1)
               OR EXISTS (SELECT 1 FROM run_holds h WHERE h.task_id = q.task_id
                        AND h.task_id IS NOT NULL AND h.deadline_at > @now))) AS task_busy,
              (EXISTS (SELECT 1 FROM run_ready b
                        WHERE b.thread_scope = q.thread_scope AND b.thread_id = q.thread_id
                          AND b.thread_id <> b.run_id
                          AND (b.queued_at < q.queued_at
                               OR (b.queued_at = q.queued_at AND b.run_id < q.run_id)))
               OR (q.thread_id <> q.run_id AND EXISTS (SELECT 1 FROM runs x WHERE x.id = q.thread_id
                          AND x.thread_scope = q.thread_scope AND x.thread_id = x.id
                          AND x.status = 'queued'
                          AND (x.queued_at < q.queued_at
                               OR (x.queued_at = q.queued_at AND x.id < q.run_id)))))
                AS queued_behind
       FROM run_ready q JOIN tasks t ON t.id = q.task_id
       WHERE q.owner = @owner
       ORDER BY q.queued_at, q.run_id LIMIT @window`,
      CANDIDATE_COLUMNS,
      candidateRowOf,
    );
    // The owners with queued runs: a skip scan of run_ready's key, one probe per owner.
    this.#queuedOwners = db
      .prepare<[], string>(
        `WITH RECURSIVE o(owner) AS (
           SELECT (SELECT owner FROM run_ready ORDER BY owner LIMIT 1)
           UNION ALL
           SELECT (SELECT r.owner FROM run_ready r WHERE r.owner > o.owner ORDER BY r.owner LIMIT 1)
             FROM o WHERE o.owner IS NOT NULL)
         SELECT owner FROM o WHERE owner IS NOT NULL`,
      )
      .pluck(true);
    this.#ownerSlots = db.prepare<[], { owner: string; held: number }>(
      `SELECT owner, count(*) AS held FROM run_active GROUP BY owner`,
    );
    // The fused claim's look at the queue: how many queued runs (up to `look`), and whether one of them
    // is ready to claim (docs/storage.md#fused-admit-and-claim-on-sqlite). Empty in a burst within the budget.
    this.#queueLook = db.prepare<[{ now: number; look: number }], FusedQueueRow>(
      `SELECT count(*) AS queued, coalesce(min(not_before) <= @now, 0) AS ready
         FROM (SELECT not_before FROM run_ready LIMIT @look)`,
    );
    // A new run's place, as the claim's read tells it of a queued run: whether its thread (and,
    // exclusive, its task) holds a slot or a not-told cancelled run's hold, and whether a queued run,
    // ready or not, precedes it in its FIFO: its task's (run_ready_task_idx), its shared thread's
    // (run_ready_thread_idx), or for a thread named like a run, that run queued (the ledger's key).
    this.#fusedFlags = db.prepare<[FusedFlagsArgs], FusedFlagsRow>(
      `SELECT
         (EXISTS (SELECT 1 FROM run_active a
                   WHERE a.thread_scope = @thread_scope AND a.thread_id = @thread_id)
          OR EXISTS (SELECT 1 FROM run_holds h WHERE h.thread_scope = @thread_scope
                   AND h.thread_id = @thread_id AND h.deadline_at > @now)) AS thread_busy,
         (@exclusive = 1 AND (EXISTS (SELECT 1 FROM run_active a
                   WHERE a.task_id = @task_id AND a."exclusive" = 1)
          OR EXISTS (SELECT 1 FROM run_holds h WHERE h.task_id = @task_id
                   AND h.task_id IS NOT NULL AND h.deadline_at > @now))) AS task_busy,
         (EXISTS (SELECT 1 FROM run_ready q WHERE q.task_id = @task_id)
          OR EXISTS (SELECT 1 FROM run_ready b WHERE b.thread_scope = @thread_scope
                   AND b.thread_id = @thread_id AND b.thread_id <> b.run_id)
          OR (@thread_id <> @id AND EXISTS (SELECT 1 FROM runs p WHERE p.id = @thread_id
                   AND p.status = 'queued' AND p.thread_id = p.id
                   AND p.thread_scope = @thread_scope))) AS queued_behind`,
    );
    // Of a JSON array of task ids, those an exclusive run may not start on: the task holds a slot
    // exclusively, or a not-told cancelled run's hold (`#fusedFlags`' task_busy for a batch at once).
    this.#busyExclusiveTasks = db
      .prepare<[string, number], string>(
        `SELECT w.value FROM json_each(?) AS w
          WHERE EXISTS (SELECT 1 FROM run_active a WHERE a.task_id = w.value AND a."exclusive" = 1)
             OR EXISTS (SELECT 1 FROM run_holds h WHERE h.task_id = w.value
                          AND h.task_id IS NOT NULL AND h.deadline_at > ?)`,
      )
      .pluck(true);
  }

  /**
   * The claim fused into an admission (docs/storage.md#fused-admit-and-claim-on-sqlite), inside the
   * admitting write transaction, before its runs are inserted: of `entries` (the batch's new queued runs
   * with their tasks as admission leaves them), the ones this replica may launch at once, chosen by
   * `select` as a claim chooses and claimed by the shared round with freshly minted tokens; the caller
   * inserts them launching. The rule is PostgreSQL's: only while no queued run is ready to claim (the
   * claim would then choose among exactly these runs), and a run only while no queued run of its task or
   * shared thread precedes it and its thread and exclusive task hold no slot; never more than the
   * budget's room (counted under the write lock, which no other claimer can take until this commits) nor
   * an owner's share. Empty when nothing is fused.
   */
  fuse(
    request: ClaimRequest,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
    entries: readonly ClaimedRun[],
  ): ClaimedRun[] {
    if (entries.length === 0) return [];
    const room = claimBudget(request, this.#slotsHeld.get() ?? 0);
    if (room === 0) return [];
    const queue = this.#queueLook.get({ now: request.now, look: FUSED_QUEUE_LOOK + 1 });
    if (queue === undefined || queue.ready === 1 || queue.queued > FUSED_QUEUE_LOOK) return [];
    const busyThreads = new Set<string>();
    const busyTasks = new Set<TaskId>();
    // With the queue empty no queued run precedes a new run, and one on a thread of its own (its new
    // id) can find no slot or hold on its thread: only an exclusive one's task is read, for the whole
    // batch in one statement (the burst's usual run: a once task's default overlap is exclusive). Were a
    // slot there all the same, run_active's key would refuse the insert and the batch be admitted unfused.
    const queueEmpty = queue.queued === 0;
    const ownThread = (run: Run): boolean => queueEmpty && run.threadId === (run.id as string);
    const exclusiveTasks = entries.flatMap(({ run }) =>
      ownThread(run) && run.exclusive ? [run.taskId] : [],
    );
    if (exclusiveTasks.length > 0) {
      for (const id of this.#busyExclusiveTasks.all(JSON.stringify(exclusiveTasks), request.now)) {
        busyTasks.add(id as TaskId);
      }
    }
    const candidates = entries.map(({ run, task }): ClaimCandidate => {
      const flags = ownThread(run)
        ? undefined
        : this.#fusedFlags.get({
            id: run.id,
            task_id: run.taskId,
            thread_scope: run.threadScope,
            thread_id: run.threadId,
            exclusive: run.exclusive ? 1 : 0,
            now: request.now,
          });
      if (flags?.thread_busy === 1) busyThreads.add(threadKey(run.threadScope, run.threadId));
      if (flags?.task_busy === 1) busyTasks.add(run.taskId);
      return claimCandidateOf(run, task, flags?.queued_behind === 1);
    });
    const ownerActive = new Map<string, number>();
    // Counted only when some owner may be capped (the library's default caps nobody).
    if (request.share !== undefined) {
      for (const row of this.#ownerSlots.all()) ownerActive.set(row.owner, row.held);
    }
    const share = request.share;
    const counted = new Map(ownerActive);
    const offered = new Set<string>(candidates.map((candidate) => candidate.id));
    const chosen = select({ candidates, busyThreads, busyTasks, budget: room, ownerActive })
      // Only offered runs, each once, within the owners' shares: the store's to keep.
      .filter((candidate) => offered.delete(candidate.id))
      .filter((candidate) => {
        if (share === undefined) return true;
        const held = counted.get(candidate.owner) ?? 0;
        if (held >= ownerMaxActiveRuns(share, candidate.owner)) return false;
        counted.set(candidate.owner, held + 1);
        return true;
      });
    const byId = new Map(entries.map((entry) => [entry.run.id as string, entry] as const));
    // The shared round's decision over the batch's new queued runs, never more than the room.
    return decideClaims(chosen, room, claim, newRunsReader(byId)).map(
      (decision) => decision.claimed,
    );
  }

  claimRuns(
    request: ClaimRequest,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
  ): Promise<readonly ClaimedRun[]> {
    return settle(() =>
      this.#tx.write(() => {
        // Read under the write lock: no other claimer can change the count until this commits.
        const budget = claimBudget(request, this.#slotsHeld.get() ?? 0);
        if (budget === 0) return [];
        const picked = this.#choose(request.limit, budget, request.share, request.now, select);
        if (picked.length === 0) return [];
        // The chosen runs and their tasks in one statement each: a point read per run cost about twice
        // as much per row (measured on 2,000-run bursts). Claiming one run changes no other run's row.
        const rows = new Map<string, RunRow>();
        for (const row of this.#shared.runsByIds.all(JSON.stringify(picked.map((c) => c.id)))) {
          rows.set(row.id, row);
        }
        // Each task's state read narrow, its definition held or read whole when its row changed
        // (docs/storage.md#the-claim-reads-narrow-rows).
        const tasks = this.#definitions.tasksOf([
          ...new Set([...rows.values()].map((row) => row.task_id)),
        ]);
        // The budget is the store's to keep: never more than it, whatever `select` returned.
        return claimChosen(picked, budget, claim, {
          rowOf: (candidate) => rows.get(candidate.id),
          statusOf: (row) => row.status as RunStatus,
          claimable: (row) => {
            const task = this.#taskOf(row.task_id, tasks);
            return { run: runFromRow(row), task };
          },
          writeClaims: (decisions) =>
            decisions
              .filter(({ claimed, before }) => this.#writeClaim(claimed.run, before))
              .map(({ claimed }) => claimed),
        });
      }),
    );
  }

  /**
   * The queued runs `select` chose, in its order, each once and only offered ones: from the first
   * `limit` queued runs, or from the wider window when those left room (claim-window.ts).
   */
  #choose(
    limit: number,
    budget: number,
    share: OwnerShare | undefined,
    now: Instant,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
  ): ClaimCandidate[] {
    let window = firstClaimWindow(limit);
    const owners = this.#queuedOwners.all();
    const ownerActive = new Map<string, number>();
    // Counted only when some owner may be capped (the library's default caps nobody).
    if (share !== undefined) {
      for (const row of this.#ownerSlots.all()) ownerActive.set(row.owner, row.held);
    }
    for (;;) {
      // Each owner's head of the queue (docs/semantics.md#fair-share): with several owners a run's
      // thread may have an earlier run outside the rows read, which `queued_behind` tells.
      // `window` runs in all, at least one per owner: the rows read stay bounded by the claim.
      const perOwner = Math.max(1, Math.ceil(window / Math.max(1, owners.length)));
      const rows = owners.flatMap((owner) =>
        this.#candidates.all({ owner, window: perOwner, now }),
      );
      const busyThreads = new Set<string>();
      const busyTasks = new Set<TaskId>();
      for (const row of rows) {
        if (row.thread_busy === 1) busyThreads.add(threadKey(row.thread_scope, row.thread_id));
        if (row.task_busy === 1) busyTasks.add(row.task_id as TaskId);
      }
      const candidates = rows.map(candidateFromRow);
      const offered = new Set<string>(candidates.map((candidate) => candidate.id));
      const counted = new Map(ownerActive);
      const picked = select({ candidates, busyThreads, busyTasks, budget, ownerActive })
        .filter((candidate) => offered.delete(candidate.id))
        .filter((candidate) => {
          // The owners' shares are the store's to keep too, whatever `select` returned.
          if (share === undefined) return true;
          const held = counted.get(candidate.owner) ?? 0;
          if (held >= ownerMaxActiveRuns(share, candidate.owner)) return false;
          counted.set(candidate.owner, held + 1);
          return true;
        });
      // Full when some owner's read came back full: more of its runs are queued behind it.
      const fullest = Math.max(0, ...countBy(rows, (row) => row.owner).values());
      const read = fullest >= perOwner ? window : 0;
      if (!needsWiderWindow({ limit, window, read, chosen: picked.length, room: budget })) {
        return picked;
      }
      window = fullClaimWindow(limit);
    }
  }

  /** Writes a claimed run; false when a slot index refuses it (that run is skipped, not an error). */
  #writeClaim(run: Run, before: RunRow): boolean {
    try {
      return this.#shared.writeRun(runToRow(run), before, true) === 1;
    } catch (error) {
      const key = brokenRunKey(error, run.trigger);
      if (key === "runs_task_slot_uq" || key === "runs_thread_slot_uq") return false;
      throw error;
    }
  }

  #taskOf(id: string, cache: Map<string, Task>): Task {
    return taskOfRun(this.#shared, this.#definitions, id, cache);
  }
}

/**
 * Queued runs the fused claim looks at, at most, to make sure none is ready to claim: with more in
 * `run_ready`, nothing is fused (the claim serves the queue). PostgreSQL's bound too.
 */
const FUSED_QUEUE_LOOK = 1000;

interface FusedQueueRow {
  readonly queued: number;
  readonly ready: number;
}

interface FusedFlagsArgs {
  readonly id: string;
  readonly task_id: string;
  readonly thread_scope: string;
  readonly thread_id: string;
  readonly exclusive: number;
  readonly now: number;
}

interface FusedFlagsRow {
  readonly thread_busy: number;
  readonly task_busy: number;
  readonly queued_behind: number;
}

/** The round's reader over a batch's new runs, not yet written: each is queued, with its task. */
function newRunsReader(byId: ReadonlyMap<string, ClaimedRun>): ClaimRoundReader<ClaimedRun> {
  return {
    rowOf: (candidate) => byId.get(candidate.id),
    statusOf: (found) => found.run.status,
    claimable: (found) => found,
  };
}

/** How many of `items` fall under each key. */
function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function candidateFromRow(row: CandidateRow): ClaimCandidate {
  return {
    id: row.id as RunId,
    taskId: row.task_id as TaskId,
    owner: row.owner as OwnerId,
    threadScope: row.thread_scope,
    threadId: row.thread_id as ThreadId,
    exclusive: row.exclusive === 1,
    notBefore: instant(row.not_before),
    queuedAt: instant(row.queued_at),
    handlerName: row.handler_name,
    ...(row.queued_behind === 1 ? { queuedBehind: true } : {}),
  };
}
