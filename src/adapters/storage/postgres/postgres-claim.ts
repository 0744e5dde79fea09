/**
 * Claiming queued runs on PostgreSQL (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch;
 * the design is docs/storage.md#the-claim-path-on-postgresql). No lock serialises the replicas: a claim
 * reads the head of the queue from `run_ready` (queued runs only) and locks its runs (`SKIP LOCKED`), with
 * the busy flags of its threads and tasks (`claim_slots`, one lease row per taken slot of the global
 * budget since migration 31, and `run_holds`) and the free budget, in one statement, so a concurrent claim
 * reads past the runs this one holds; `select` chooses; the claim then takes that many free slot numbers
 * (each under an advisory lock tried, never waited for), fetches the chosen runs with their tasks, and
 * inserts the leases and writes the runs' state in one statement (whose trigger takes the runs out of
 * `run_ready`): a lease a key refuses (`ON CONFLICT DO NOTHING`) leaves its run queued. The busy flags are
 * plain reads, so a run another replica holds still heads its thread; the leases' unique keys refuse a
 * second active run in a thread or exclusive task if two claimers ever chose one, and the database
 * refuses an active run without a lease (migrations 24 and 31).
 */
import { ownerMaxActiveRuns, shareLimitsOwners, threadKey } from "../../../domain/claim.js";
import type { ClaimCandidate, ClaimSelectionInput } from "../../../domain/claim.js";
import { ownerId, runId, taskId, threadId } from "../../../domain/ids.js";
import type { FencingToken, TaskId } from "../../../domain/ids.js";
import type { ClaimRequest, ClaimedRun } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresClient, PostgresQueryable, PostgresStatement } from "./postgres-pool.js";
import type { StatementPrefix } from "./postgres-run-writes.js";
import { instantOf, integer, record, text } from "./postgres-rows.js";
import type { Column } from "./postgres-sql.js";
import {
  columnArrays,
  msToTimestamp,
  prepared,
  timestampToMs,
  unnestSource,
} from "./postgres-sql.js";
import {
  claimStateColumns,
  claimStateJoin,
  claimedRunsFromStateRows,
  lockedClaimSelect,
} from "./postgres-claimed-run.js";
import { withTransaction } from "./with-transaction.js";
import { firstClaimWindow, fullClaimWindow, needsWiderWindow } from "../shared/claim-window.js";
import { claimCandidateOf, decideClaims } from "../shared/claim-round.js";
import type { ClaimRoundReader } from "../shared/claim-round.js";

type Select = (
  input: Omit<ClaimSelectionInput, "now" | "handlerNames">,
) => readonly ClaimCandidate[];
type Claim = (run: Run, task: Task, token: FencingToken) => Run;

/** The head of the queue as one claim reads it. */
interface QueueHead {
  readonly candidates: readonly ClaimCandidate[];
  /** Slots each candidate owner holds. */
  readonly ownerActive: Map<string, number>;
  /** Whether some owner's read came back full (more of its runs are queued behind it). */
  readonly full: boolean;
  /** Threads (`threadKey`) of the candidates that hold a slot. */
  readonly busyThreads: Set<string>;
  /** Tasks of exclusive candidates that hold a slot. */
  readonly busyTasks: Set<TaskId>;
  /** Budget slots this claim may take: free, numbered within the budget, at most the claim's limit. */
  readonly room: number;
  /** The owners capped below the budget, and those whose share lock this claim holds; null: none capped. */
  readonly guard: OwnerGuard | null;
  /** The candidates' whole rows (the run and its task's state) by run id, when the read returned them; else null. */
  readonly rows: ReadonlyMap<string, Record<string, unknown>> | null;
}

/** Owners capped below the budget, and those of them whose share lock the claim holds. */
interface OwnerGuard {
  readonly capped: ReadonlySet<string>;
  readonly locked: ReadonlySet<string>;
}

/**
 * A lease's thread, as `claim_slots_thread_uq` reads it (migration 32): `thread_id` is NULL for a run on a
 * thread of its own, whose thread is its id. A lookup by thread writes this expression, so the key serves it.
 */
export const LEASE_THREAD = "COALESCE(s.thread_id, s.run_id)";

/**
 * The value `claim_slots_thread_uq` holds for thread `thread` of scope `scope` (SQL expressions): a 64-bit
 * hash of the scope, length-prefixed, and the thread (migration 32).
 */
function threadKeyOf(scope: string, thread: string): string {
  return `hashtextextended(length(${scope})::text || ':' || ${scope} || ${thread}, 0)`;
}

/**
 * A lease `s` on thread `thread` of scope `scope` (SQL expressions): by its key's hash, so that key serves
 * the lookup, and by the text itself, so a hash shared by two threads never makes one busy.
 */
export function leaseOnThread(scope: string, thread: string): string {
  return (
    `${threadKeyOf("s.thread_scope", LEASE_THREAD)} = ${threadKeyOf(scope, thread)}` +
    ` AND s.thread_scope = ${scope} AND ${LEASE_THREAD} = ${thread}`
  );
}

/** A lease `s` of an exclusive run of task `task` (an SQL expression), by `claim_slots_task_uq` and exactly. */
export function leaseOfExclusiveTask(task: string): string {
  return (
    `s.exclusive AND hashtextextended(s.run_task_id, 0) = hashtextextended(${task}, 0)` +
    ` AND s.run_task_id = ${task}`
  );
}

/**
 * What a lease holds (docs/storage.md#the-run-model-on-postgresql), after the slot's number: whether its
 * run is exclusive (then `claim_slots_task_uq` keys its task), the run, its thread, owner and task.
 */
const SLOT_BIND_COLUMNS: readonly Column[] = [
  { name: "slot", type: "int4" },
  { name: "exclusive", type: "bool" },
  { name: "run_id", type: "text" },
  { name: "thread_scope", type: "text" },
  { name: "owner", type: "text" },
  { name: "run_task_id", type: "text" },
  { name: "thread_id", type: "text" },
];

/** How many times a claim reads the queue again after another replica took the runs it chose. */
const CONTENDED_READS = 3;

export class PostgresClaim {
  readonly #ctx: PostgresContext;
  readonly #slots: string;
  readonly #ready: string;
  readonly #holds: string;
  readonly #lockChosen: PostgresStatement;
  readonly #lockSlots: PostgresStatement;
  readonly #lockOwners: PostgresStatement;
  readonly #queuedOwners: string;
  readonly #fusedRead: PostgresStatement;
  readonly #statements = new Map<string, PostgresStatement>();

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#slots = `${ctx.schema.quoted}.claim_slots`;
    this.#ready = `${ctx.schema.quoted}.run_ready`;
    this.#holds = `${ctx.schema.quoted}.run_holds`;
    // By id only (see lockedClaimSelect): with `status = 'queued'` here the planner walked the whole
    // queue index. The status is checked once the rows are locked.
    this.#lockChosen = prepared(lockedClaimSelect(ctx, "$1::text[]"));
    // Free slot numbers within the budget (no lease row), each tried under a transaction lock of its
    // own, never waited for (the `SKIP LOCKED` of a row that does not exist yet): a number another
    // claim in flight chose is passed over. The free numbers are listed first (`OFFSET 0`), so only
    // the numbers returned are locked. The lease's primary key still refuses a number inserted twice
    // (the insert's `ON CONFLICT DO NOTHING`, docs/storage.md#the-run-model-on-postgresql).
    this.#lockSlots = prepared(
      `SELECT f.slot FROM (SELECT g.slot FROM generate_series(1, $1::int4) AS g(slot)` +
        ` WHERE NOT EXISTS (SELECT 1 FROM ${this.#slots} AS s WHERE s.slot = g.slot) OFFSET 0) AS f` +
        ` WHERE pg_try_advisory_xact_lock(hashtext($3::text), f.slot) LIMIT $2::int4`,
    );
    // An owner's share is kept across replicas by a lock per owner, tried, never waited for: a claim
    // that cannot take it leaves that owner's runs to the claim holding it (docs/storage.md#fair-share-across-owners).
    this.#lockOwners = prepared(
      `SELECT u.owner, pg_try_advisory_xact_lock(hashtextextended($2::text || u.owner, 0)) AS locked` +
        ` FROM unnest($1::text[]) AS u(owner)`,
    );
    // The owners with queued runs: a skip scan of run_ready_owner_queue_idx, one probe per owner. Sent
    // unnamed, so planned at each call against `run_ready` as it is: named, it kept the plan its
    // connection made on an empty `run_ready`, a read and sort of the whole queue per owner and one
    // more (docs/storage.md#plans-made-while-runs-looked-empty).
    this.#queuedOwners =
      `WITH RECURSIVE o(owner) AS (` +
      ` (SELECT q.owner FROM ${this.#ready} AS q ORDER BY q.owner LIMIT 1)` +
      ` UNION ALL SELECT (SELECT q.owner FROM ${this.#ready} AS q` +
      ` WHERE q.owner > o.owner ORDER BY q.owner LIMIT 1)` +
      ` FROM o WHERE o.owner IS NOT NULL)` +
      ` SELECT owner FROM o WHERE owner IS NOT NULL`;
    this.#fusedRead = prepared(fusedReadText(ctx, this.#slots, this.#ready, this.#holds));
  }

  async claimRuns(
    request: ClaimRequest,
    select: Select,
    claim: Claim,
  ): Promise<readonly ClaimedRun[]> {
    if (request.maxConcurrentRuns <= 0 || request.limit <= 0) return [];
    return this.#claimRuns(request, select, claim);
  }

  /**
   * The claim fused into an admission (docs/storage.md#fused-admit-and-claim), in the admitting
   * transaction, before its runs are inserted: of `entries` (the batch's new queued runs with their
   * tasks), the ones this replica may launch at once, chosen by `select` as a claim chooses, claimed
   * with freshly minted tokens, each with a free budget slot number taken as the claim takes it (the
   * leases inserted by `bindSlotsBefore` in front of the insert). Only while no queued run is ready to
   * claim (the claim would then choose among exactly these runs: no queued run is overtaken, and the
   * owners' round-robin is the claim's), and a run only while no queued run of its task or shared thread
   * precedes it and its thread and exclusive task hold no slot. Null when nothing is fused.
   */
  async fuse(
    client: PostgresClient,
    request: ClaimRequest,
    select: Select,
    claim: Claim,
    entries: readonly ClaimedRun[],
  ): Promise<FusedClaims | null> {
    if (request.maxConcurrentRuns <= 0 || request.limit <= 0 || entries.length === 0) return null;
    const owners = [...new Set(entries.map((e) => e.run.owner))];
    const guard = await this.#lockCappedOwners(client, request, owners);
    const rows = entries.map(({ run }) => [
      run.id,
      run.owner,
      run.taskId,
      run.threadScope,
      run.threadId,
      run.exclusive,
    ]);
    const read = await client.query(this.#fusedRead, [
      ...columnArrays(FUSED_COLUMNS, rows),
      request.now,
      request.maxConcurrentRuns,
      request.limit,
    ]);
    // Empty when the budget has no room (the read then looks at nothing else).
    if (read.rows.length === 0) return null;
    const flags = new Map(read.rows.map((row) => [text(record(row), "id"), record(row)]));
    const busyThreads = new Set<string>();
    const busyTasks = new Set<TaskId>();
    const ownerActive = new Map<string, number>();
    let room = 0;
    const candidates = entries.map(({ run, task }): ClaimCandidate => {
      const row = flags.get(run.id);
      if (row === undefined) throw new Error(`the fused claim's read left out run ${run.id}`);
      if (row["thread_busy"] === true) busyThreads.add(threadKey(run.threadScope, run.threadId));
      if (row["task_busy"] === true) busyTasks.add(run.taskId);
      ownerActive.set(run.owner, integer(row, "owner_active"));
      room = integer(row, "room");
      // An owner capped below the budget whose share lock another claim holds is left to it.
      const shareHeld =
        guard === null || !guard.capped.has(run.owner) || guard.locked.has(run.owner);
      return claimCandidateOf(run, task, row["queued_behind"] === true || !shareHeld);
    });
    if (room <= 0) return null;
    const offered = new Set<string>(candidates.map((c) => c.id));
    const chosen = select({ candidates, busyThreads, busyTasks, ownerActive, budget: room })
      // The budget is the store's to keep, whatever `select` returned; and only offered runs.
      .filter((c) => offered.delete(c.id))
      .slice(0, room);
    const head: QueueHead = {
      candidates,
      ownerActive,
      full: false,
      busyThreads,
      busyTasks,
      room,
      guard,
      rows: null,
    };
    const within = this.#withinShares(request, head, chosen);
    if (within.length === 0) return null;
    const slotRows = await client.query(this.#lockSlots, [
      request.maxConcurrentRuns,
      within.length,
      this.#slots,
    ]);
    const slots = slotRows.rows.map((row) => integer(record(row), "slot"));
    const byId = new Map(entries.map((e) => [e.run.id, e] as const));
    // The shared round's decision over the batch's new queued runs, one per slot locked.
    const claimed = decideClaims(within, slots.length, claim, readClaimed(byId), undefined).map(
      (decision) => decision.claimed,
    );
    if (claimed.length === 0) return null;
    return { claimed, slots: slots.slice(0, claimed.length) };
  }

  /**
   * The binding of `fused`'s slots, as a data-modifying `WITH` in front of the runs' insert (its
   * parameters after the insert's): the insert's trigger checks every run inserted launching holds one.
   */
  bindSlotsBefore(fused: FusedClaims): StatementPrefix {
    return {
      text: this.#bindSlots(this.#ctx.runSql.insertParameterCount + 1, false),
      values: columnArrays(SLOT_BIND_COLUMNS, bindingRows(fused.claimed, fused.slots)),
    };
  }

  /**
   * One claim transaction. The claims are written without a savepoint: a lease a key refuses (its number
   * taken by another claim since it was chosen, or its run's thread or exclusive task bound meanwhile) is
   * not inserted, and its run stays queued (`#bindSlots`), so no refusal abandons the transaction.
   */
  async #claimRuns(
    request: ClaimRequest,
    select: Select,
    claim: Claim,
  ): Promise<readonly ClaimedRun[]> {
    // The owners with queued runs, read before the transaction: at READ COMMITTED each statement reads
    // its own snapshot, so the read inside one would see no more. A claim that finds no queued run
    // (a wake-up with nothing to take, a second replica's claim after the first took the queue) is
    // one round trip and no transaction (docs/storage.md#the-claim-path-on-postgresql).
    let owners: readonly string[] | null = await this.#queuedOwnerList(this.#ctx.pool);
    if (owners.length === 0) return [];
    return withTransaction(this.#ctx.pool, async (client) => {
      // Runs another replica holds locked: still queued as far as this transaction sees, so they stay
      // in the queue as heads of their threads (FIFO), counted busy.
      const inFlight: ClaimCandidate[] = [];
      let window = firstClaimWindow(request.limit);
      for (let read = 0; read < CONTENDED_READS; read++) {
        const head = await this.#readQueueHead(
          client,
          request,
          window + inFlight.length,
          window === firstClaimWindow(request.limit),
          owners,
        );
        owners = null;
        if (head.room <= 0 || head.candidates.length === 0) return [];
        for (const run of inFlight) {
          head.busyThreads.add(threadKey(run.threadScope, run.threadId));
          if (run.exclusive) head.busyTasks.add(run.taskId);
        }
        const offered = new Set<string>(head.candidates.map((c) => c.id));
        const chosen = select({
          candidates: head.candidates,
          busyThreads: head.busyThreads,
          busyTasks: head.busyTasks,
          ownerActive: head.ownerActive,
          budget: head.room,
        })
          // The budget is the store's to keep, whatever `select` returned; and only offered runs.
          .filter((c) => offered.delete(c.id))
          .slice(0, head.room);
        if (
          needsWiderWindow({
            limit: request.limit,
            window: window + inFlight.length,
            read: head.full ? window + inFlight.length : 0,
            chosen: chosen.length,
            room: head.room,
          })
        ) {
          window = fullClaimWindow(request.limit);
          read--;
          continue;
        }
        if (chosen.length === 0) return [];
        const outcome = await this.#claimChosen(
          client,
          request,
          this.#withinShares(request, head, chosen),
          head.rows,
          claim,
        );
        if (outcome.claimed !== null) return outcome.claimed;
        inFlight.push(...outcome.taken);
      }
      return [];
    });
  }

  /** The owners with queued runs (a skip scan of `run_ready_owner_queue_idx`). */
  async #queuedOwnerList(client: PostgresQueryable): Promise<readonly string[]> {
    return (await client.query(this.#queuedOwners)).rows.map((row) => text(record(row), "owner"));
  }

  /**
   * Each owner's first queued runs, `window` in all (at least one per owner), with the slots their
   * threads and tasks hold, and the room; `full`: with their whole rows.
   */
  async #readQueueHead(
    client: PostgresClient,
    request: ClaimRequest,
    window: number,
    full: boolean,
    /** The owners with queued runs when just read; null: read them. */
    listed: readonly string[] | null,
  ): Promise<QueueHead> {
    const queued = listed ?? (await this.#queuedOwnerList(client));
    const guard = await this.#lockCappedOwners(client, request, queued);
    // A capped owner is read only under its share lock (#lockCappedOwners).
    const owners =
      guard === null
        ? queued
        : queued.filter((owner) => !guard.capped.has(owner) || guard.locked.has(owner));
    // The owners' count, rounded up to a power of two, and each one's window are written into the
    // statement's text (a handful of statements): the planner then knows how many rows it reads.
    const bucket = 2 ** Math.ceil(Math.log2(Math.max(1, owners.length)));
    const perOwner = Math.max(1, Math.ceil(window / bucket));
    const statement = this.#queueHead(
      bucket,
      perOwner,
      request.maxConcurrentRuns,
      request.limit,
      full,
    );
    const rows =
      owners.length === 0
        ? []
        : (await client.query(statement, [request.now, owners])).rows.map(record);
    const busyThreads = new Set<string>();
    const busyTasks = new Set<TaskId>();
    for (const row of rows) {
      if (row["thread_busy"] === true) {
        busyThreads.add(threadKey(text(row, "thread_scope"), text(row, "thread_id")));
      }
      if (row["task_busy"] === true) busyTasks.add(taskId(text(row, "task_id")));
    }
    const first = rows[0];
    const ownerActive = new Map<string, number>();
    const counts = new Map<string, number>();
    for (const row of rows) {
      const owner = text(row, "owner");
      ownerActive.set(owner, integer(row, "owner_active"));
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    const fullest = Math.max(0, ...counts.values());
    return {
      candidates: rows.map(candidateFromRow),
      ownerActive,
      // Full when some owner's read came back full: then more of its runs are queued behind it.
      full: fullest >= perOwner,
      busyThreads,
      busyTasks,
      room: first === undefined ? 0 : integer(first, "room"),
      guard,
      rows: full ? new Map(rows.map((row) => [text(row, "id"), row])) : null,
    };
  }

  /**
   * Each owner's head of the queue in claim order (docs/storage.md#fair-share-across-owners), for the
   * owners the skip scan listed (`$2`): each owner's first `window` queued runs by
   * `run_ready_owner_queue_idx`, each run locked, skipping runs another claim holds; each run with whether
   * its thread (and, exclusive, its task) holds a slot or a not-told cancelled run's hold (`run_holds`),
   * whether an earlier queued run of its thread exists (another owner's: `run_ready_thread_queue_idx`,
   * one probe, and the ledger's primary key for a run on a thread of its own),
   * its task's handler, the slots its owner holds and the
   * budget's room. The owners' count, the window, budget and limit are written into the text (checked
   * integers; one prepared statement per combination, a handful), so the planner knows how many rows
   * it reads (an estimate of ten owners per recursive step once pushed a 200-run claim over
   * `jit_above_cost`). Every lookup is by key: the task by primary key, the busy flags and counts in
   * `claim_slots`, whose rows are the budget's slots, and the first entries of `run_ready`'s indexes
   * (never a walk of `runs`).
   */
  #queueHead(
    owners: number,
    window: number,
    budget: number,
    limit: number,
    full: boolean,
  ): PostgresStatement {
    const key = `${owners}/${window}/${budget}/${limit}/${full ? "full" : "light"}`;
    let statement = this.#statements.get(key);
    if (statement !== undefined) return statement;
    const ctx = this.#ctx;
    const slots = this.#slots;
    const runs = ctx.runSql.table;
    const ready = this.#ready;
    const holds = this.#holds;
    // A cancelled run whose target was not told holds its thread and task until its deadline
    // (docs/semantics.md#cancellation); the claim's instant is the first parameter, the owners the second.
    const now = msToTimestamp("$1::int8");
    // Every lease counts against the budget, those numbered above a lowered budget too (they drain).
    const room = `(SELECT LEAST(${int4(budget)} - count(*), ${int4(limit)}) FROM ${slots})::int4`;
    // The narrow read returns the whole run and its task's state (what `#claimChosen` claims from, the
    // task's definition taken from `TaskDefinitions`): its runs are locked here already, and nearly all
    // of them are chosen. The wide read, a few times the limit, returns what choosing needs; the chosen
    // runs are fetched after.
    const columns = full
      ? `${ctx.runSql.columns}, ${claimStateColumns("t")}, t.task__handler_name AS handler_name`
      : `r.id, r.task_id, r.owner, r.thread_scope, r.thread_id, r.exclusive,` +
        ` ${timestampToMs("r.not_before")} AS not_before, ${timestampToMs("r.queued_at")} AS queued_at,` +
        ` (SELECT t.handler_name FROM ${ctx.tasksTable} AS t WHERE t.id = r.task_id) AS handler_name`;
    const task = full ? claimStateJoin(ctx, "t") : "";
    statement = prepared(
      `SELECT ${columns},` +
        ` (EXISTS (SELECT 1 FROM ${slots} AS s` +
        ` WHERE ${leaseOnThread("r.thread_scope", "r.thread_id")})` +
        ` OR EXISTS (SELECT 1 FROM ${holds} AS h WHERE h.thread_scope = r.thread_scope` +
        ` AND h.thread_id = r.thread_id AND h.deadline_at > ${now})) AS thread_busy,` +
        ` (r.exclusive AND (EXISTS (SELECT 1 FROM ${slots} AS s` +
        ` WHERE ${leaseOfExclusiveTask("r.task_id")})` +
        ` OR EXISTS (SELECT 1 FROM ${holds} AS h WHERE h.task_id = r.task_id` +
        ` AND h.deadline_at > ${now}))) AS task_busy,` +
        // Queued runs on a shared thread are in run_ready_thread_queue_idx; a run on a thread of its own
        // (thread id = run id) is not, so a run bound to a thread named like such a run finds it by the
        // ledger's primary key (a run is queued exactly while it is in run_ready).
        ` (EXISTS (SELECT 1 FROM ${ready} AS b WHERE b.thread_id <> b.run_id` +
        ` AND b.thread_scope = r.thread_scope AND b.thread_id = r.thread_id` +
        ` AND (b.queued_at, b.run_id) < (r.queued_at, r.id))` +
        ` OR (r.thread_id <> r.id AND EXISTS (SELECT 1 FROM ${runs} AS p` +
        ` WHERE p.id = r.thread_id AND p.status = 'queued' AND p.thread_id = p.id` +
        ` AND p.thread_scope = r.thread_scope AND (p.queued_at, p.id) < (r.queued_at, r.id)))) AS queued_behind,` +
        ` o.held AS owner_active, ${room} AS room` +
        // Each owner's slots, counted in one pass over the slots (one row per slot of the budget).
        ` FROM (SELECT u.owner, COALESCE(h.held, 0)::int4 AS held` +
        ` FROM (SELECT w.owner FROM unnest($2::text[]) AS w(owner) LIMIT ${int4(owners)}) AS u` +
        ` LEFT JOIN (SELECT s.owner, count(*) AS held FROM ${slots} AS s WHERE s.owner IS NOT NULL` +
        ` GROUP BY s.owner) AS h ON h.owner = u.owner OFFSET 0) AS o` +
        // The owner's first queued runs in run_ready_owner_queue_idx order, each run locked by primary key
        // (skipping the runs another transaction holds) and seen queued once locked.
        ` CROSS JOIN LATERAL (SELECT x.* FROM ${ready} AS q CROSS JOIN LATERAL (SELECT * FROM ${runs} AS p` +
        ` WHERE p.id = q.run_id AND p.status = 'queued' FOR UPDATE SKIP LOCKED) AS x` +
        ` WHERE q.owner = o.owner ORDER BY q.queued_at, q.run_id LIMIT ${int4(window)}) AS r` +
        task +
        // Uncorrelated, so evaluated once before anything else: with no room (the budget taken, as it
        // is for much of a burst) the queue is not read at all.
        ` WHERE ${room} > 0` +
        ` ORDER BY r.queued_at, r.id`,
    );
    // Bounded: a few windows per limit, one budget per fleet.
    if (this.#statements.size < 64) this.#statements.set(key, statement);
    return statement;
  }

  /**
   * Takes as many free slots as there are chosen runs and, unless the queue-head read returned their
   * rows (`rows`: it locked them), locks the chosen runs, skipping any another transaction holds
   * (another claimer, an owner command); then claims and writes as many as it holds slots for, in claim
   * order. `claimed` is null when another replica held every chosen run (`taken`): the caller reads the
   * queue again with those counted busy.
   */
  async #claimChosen(
    client: PostgresClient,
    request: ClaimRequest,
    chosen: readonly ClaimCandidate[],
    rows: ReadonlyMap<string, Record<string, unknown>> | null,
    claim: Claim,
  ): Promise<{ claimed: readonly ClaimedRun[] | null; taken: readonly ClaimCandidate[] }> {
    if (chosen.length === 0) return { claimed: [], taken: [] };
    const slotRows = await client.query(this.#lockSlots, [
      request.maxConcurrentRuns,
      chosen.length,
      this.#slots,
    ]);
    const slots = slotRows.rows.map((row) => integer(record(row), "slot"));
    if (slots.length === 0) return { claimed: [], taken: [] };
    const fresh = await this.#chosenRows(client, chosen, rows);
    const taken = chosen.filter((c) => !fresh.has(c.id));
    // The shared round's decision, as many as this claim holds slots for: a run claimed (or changed) by
    // another transaction since the queue was read is not this claim's. The shares were kept above
    // (#withinShares, under the owners' share locks).
    const claimed = decideClaims(chosen, slots.length, claim, readClaimed(fresh), undefined).map(
      (decision) => decision.claimed,
    );
    // Every chosen run was taken or changed by another transaction: read the queue again.
    if (claimed.length === 0) return { claimed: null, taken };
    return { claimed: await this.#write(client, claimed, slots), taken };
  }

  /**
   * The chosen runs with their tasks, by run id: parsed from the queue-head read's rows when it returned
   * them (locked by this transaction and seen queued there), else locked and read by primary key.
   */
  async #chosenRows(
    client: PostgresClient,
    chosen: readonly ClaimCandidate[],
    rows: ReadonlyMap<string, Record<string, unknown>> | null,
  ): Promise<Map<string, ClaimedRun>> {
    const found =
      rows === null
        ? (await client.query(this.#lockChosen, [chosen.map((c) => c.id)])).rows.map(record)
        : chosen.map((c) => rows.get(c.id)).filter((row) => row !== undefined);
    const claimed = await claimedRunsFromStateRows(this.#ctx, client, found);
    return new Map(claimed.map((one) => [one.run.id, one] as const));
  }

  /**
   * Tries the share lock of each of `owners` capped below the budget (in name order; never waited for,
   * held to the end of the transaction): the capped owners and those whose lock this claim holds, or
   * null when no owner is capped. The head read locks the runs it returns (`SKIP LOCKED`), so a capped
   * owner is read only once this claim holds its lock: a claim that could not claim that owner's runs
   * would otherwise hold them locked, hidden from the claim that can. Its slots are counted in the head
   * read, after the lock, so they are exact for the rest of the transaction.
   */
  async #lockCappedOwners(
    client: PostgresClient,
    request: ClaimRequest,
    owners: readonly string[],
  ): Promise<OwnerGuard | null> {
    const share = request.share;
    if (share === undefined || !shareLimitsOwners(share, request.maxConcurrentRuns)) return null;
    const capped = [...new Set(owners)].filter(
      (owner) => ownerMaxActiveRuns(share, owner) < request.maxConcurrentRuns,
    );
    if (capped.length === 0) return null;
    capped.sort();
    const locks = await client.query(this.#lockOwners, [capped, `${this.#slots}/`]);
    const locked = locks.rows
      .map(record)
      .filter((row) => row["locked"] === true)
      .map((row) => text(row, "owner"));
    return { capped: new Set(capped), locked: new Set(locked) };
  }

  /**
   * The chosen runs whose owners stay within their share (docs/semantics.md#fair-share). Only owners
   * capped below the budget are guarded (otherwise the budget's slots bound them); their runs were read
   * under their share locks, with the slots they hold counted after the locks, so two replicas' claims
   * together never put an owner over its share. An owner whose lock another claim holds is left to that
   * claim this round.
   */
  #withinShares(
    request: ClaimRequest,
    head: QueueHead,
    chosen: readonly ClaimCandidate[],
  ): readonly ClaimCandidate[] {
    const share = request.share;
    const guard = head.guard;
    if (share === undefined || guard === null) return chosen;
    const held = new Map(head.ownerActive);
    return chosen.filter((c) => {
      if (!guard.capped.has(c.owner)) return true;
      if (!guard.locked.has(c.owner)) return false;
      const count = held.get(c.owner) ?? 0;
      if (count >= ownerMaxActiveRuns(share, c.owner)) return false;
      held.set(c.owner, count + 1);
      return true;
    });
  }

  /** Binds a slot to each claimed run and writes the runs' state, in one statement. */
  async #write(
    client: PostgresClient,
    claimed: readonly ClaimedRun[],
    slots: readonly number[],
  ): Promise<ClaimedRun[]> {
    // Only the runs whose lease was inserted are written launching.
    const written = await this.#ctx.runSql.writeState(
      client,
      claimed.map((c) => c.run),
      "t.id IN (SELECT b.run_id FROM bound AS b)",
      {
        text: this.#bindSlots(this.#ctx.runSql.stateParameterCount + 1, true),
        values: columnArrays(SLOT_BIND_COLUMNS, bindingRows(claimed, slots)),
      },
    );
    return claimed.filter((c) => written.has(c.run.id));
  }

  /**
   * The leases, inserted by a data-modifying `WITH` in front of the runs' write (parameters from
   * `first`), as `bound` (the run ids whose lease was inserted). `absorb`: a lease refused by a key (its
   * number inserted by another claim since it was chosen, or its run's thread or exclusive task bound
   * meanwhile) is not inserted, and the write leaves its run queued; otherwise the refusal is an error
   * (the fused claim's: its runs are inserted launching, so the admission is written again unfused).
   */
  #bindSlots(first: number, absorb: boolean): string {
    const names = SLOT_BIND_COLUMNS.map((c) => c.name).join(", ");
    return (
      `WITH bound AS (INSERT INTO ${this.#slots} (${names})` +
      ` SELECT ${names} FROM ${unnestSource(SLOT_BIND_COLUMNS, first)}` +
      `${absorb ? " ON CONFLICT DO NOTHING" : ""} RETURNING run_id)`
    );
  }
}

/** The claim round reads a chosen run from the runs this transaction locked, with their tasks, by id. */
function readClaimed(byId: ReadonlyMap<string, ClaimedRun>): ClaimRoundReader<ClaimedRun> {
  return {
    rowOf: (candidate) => byId.get(candidate.id),
    statusOf: (found) => found.run.status,
    claimable: (found) => found,
  };
}

/** The runs a fused claim took, launching, and the budget slot each is bound to (same order). */
export interface FusedClaims {
  readonly claimed: readonly ClaimedRun[];
  readonly slots: readonly number[];
}

/** One row per claimed run, in `SLOT_BIND_COLUMNS` order, with the slot it is bound to. */
function bindingRows(claimed: readonly ClaimedRun[], slots: readonly number[]): unknown[][] {
  return claimed.map((c, i) => [
    slots[i],
    c.run.exclusive,
    c.run.id,
    c.run.threadScope,
    c.run.owner,
    c.run.taskId,
    // NULL for a run on a thread of its own: the thread key reads COALESCE(thread_id, run_id).
    (c.run.threadId as string) === c.run.id ? null : c.run.threadId,
  ]);
}

/** What the fused claim's read is given of each new queued run. */
const FUSED_COLUMNS: readonly Column[] = [
  { name: "id", type: "text" },
  { name: "owner", type: "text" },
  { name: "task_id", type: "text" },
  { name: "thread_scope", type: "text" },
  { name: "thread_id", type: "text" },
  { name: "exclusive", type: "bool" },
];

/**
 * Queued runs the fused claim's read looks at, at most, to make sure none is ready to claim: with more
 * in `run_ready`, nothing is fused (the claim path serves the queue).
 */
const FUSED_QUEUE_LOOK = 1000;

/**
 * The fused claim's read (docs/storage.md#fused-admit-and-claim): the budget's room (`$8` budget, `$9`
 * limit), 0 unless no queued run is ready to claim (`not_before` at or before `$7`: `run_ready` read
 * whole, at most `FUSED_QUEUE_LOOK` rows, else 0 too), computed once, first: with no room no row is
 * returned and nothing else is read. Then, for each new run (`$1`..`$6`), whether its thread or exclusive
 * task holds a slot or a not-told cancelled run's hold, whether a queued run, ready or not, precedes it
 * in its FIFO (its task's, by `run_ready_task_idx`; its shared thread's, the first entry of
 * `run_ready_thread_queue_idx`; for a thread named like a run, that run queued, by the ledger's primary
 * key) and the slots its owner holds. Every lookup is by key; the slots (one row per slot of the budget)
 * are counted in one pass.
 */
function fusedReadText(ctx: PostgresContext, slots: string, ready: string, holds: string): string {
  const now = msToTimestamp("$7::int8");
  const look = int4(FUSED_QUEUE_LOOK);
  return (
    `WITH waiting AS MATERIALIZED (SELECT count(*) FILTER (WHERE w.not_before <= ${now}) = 0` +
    ` AND count(*) <= ${look} AS none FROM (SELECT q.not_before FROM ${ready} AS q LIMIT ${look} + 1) AS w),` +
    ` room AS MATERIALIZED (SELECT CASE WHEN (SELECT none FROM waiting)` +
    ` THEN LEAST($8::int4 - count(*), $9::int4) ELSE 0 END::int4 AS room FROM ${slots}),` +
    ` held AS MATERIALIZED (SELECT s.owner, count(*)::int4 AS held FROM ${slots} AS s` +
    ` WHERE s.owner IS NOT NULL AND (SELECT room FROM room) > 0 GROUP BY s.owner)` +
    ` SELECT u.id,` +
    ` (EXISTS (SELECT 1 FROM ${slots} AS s WHERE ${leaseOnThread("u.thread_scope", "u.thread_id")})` +
    ` OR EXISTS (SELECT 1 FROM ${holds} AS h WHERE h.thread_scope = u.thread_scope` +
    ` AND h.thread_id = u.thread_id AND h.deadline_at > ${now})) AS thread_busy,` +
    ` (u.exclusive AND (EXISTS (SELECT 1 FROM ${slots} AS s WHERE ${leaseOfExclusiveTask("u.task_id")})` +
    ` OR EXISTS (SELECT 1 FROM ${holds} AS h WHERE h.task_id = u.task_id` +
    ` AND h.deadline_at > ${now}))) AS task_busy,` +
    ` (EXISTS (SELECT 1 FROM ${ready} AS q WHERE q.task_id = u.task_id)` +
    ` OR EXISTS (SELECT 1 FROM ${ready} AS b WHERE b.thread_id <> b.run_id` +
    ` AND b.thread_scope = u.thread_scope AND b.thread_id = u.thread_id)` +
    ` OR (u.thread_id <> u.id AND EXISTS (SELECT 1 FROM ${ctx.runSql.table} AS p` +
    ` WHERE p.id = u.thread_id AND p.status = 'queued' AND p.thread_id = p.id` +
    ` AND p.thread_scope = u.thread_scope))) AS queued_behind,` +
    ` COALESCE(o.held, 0)::int4 AS owner_active, r.room` +
    ` FROM room AS r CROSS JOIN ${unnestSource(FUSED_COLUMNS)}` +
    ` LEFT JOIN held AS o ON o.owner = u.owner` +
    ` WHERE r.room > 0`
  );
}

/** An integer written into SQL text: checked, so nothing but digits and a sign ever lands there. */
function int4(value: number): string {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
    throw new Error(`not an int4: ${value}`);
  }
  return String(value);
}

function candidateFromRow(value: unknown): ClaimCandidate {
  const row = record(value);
  const handlerName = row["handler_name"];
  return {
    id: runId(text(row, "id")),
    taskId: taskId(text(row, "task_id")),
    owner: ownerId(text(row, "owner")),
    threadScope: text(row, "thread_scope"),
    threadId: threadId(text(row, "thread_id")),
    exclusive: row["exclusive"] === true,
    notBefore: instantOf(row, "not_before"),
    queuedAt: instantOf(row, "queued_at"),
    handlerName: typeof handlerName === "string" ? handlerName : null,
    ...(row["queued_behind"] === true ? { queuedBehind: true } : {}),
  };
}
