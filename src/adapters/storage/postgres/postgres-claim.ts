/**
 * Claiming queued runs on PostgreSQL (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch): one transaction under the claim budget's
 * `pg_advisory_xact_lock`, so the count of launching/running runs read here is never stale when the
 * claims are written. The chosen runs are re-read under `FOR UPDATE SKIP LOCKED` (a run an owner command
 * holds is left alone), claimed with the domain's `claim`, and written in one statement (their state
 * columns only).
 */
import { randomUUID } from "node:crypto";
import { threadKey } from "../../../domain/claim.js";
import type { ClaimCandidate, ClaimSelectionInput } from "../../../domain/claim.js";
import { fencingToken, runId, taskId, threadId } from "../../../domain/ids.js";
import type { FencingToken, TaskId } from "../../../domain/ids.js";
import type { ClaimRequest, ClaimedRun } from "../../../domain/ports.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { PostgresContext } from "./postgres-context.js";
import { SLOT_INDEXES, uniqueViolation } from "./postgres-errors.js";
import type { PostgresClient, PostgresStatement } from "./postgres-pool.js";
import { instantOf, record, text } from "./postgres-rows.js";
import { CLAIM_BUDGET_LOCK_KIND } from "./postgres-schema-name.js";
import { prepared, timestampToMs } from "./postgres-sql.js";
import { claimedRunSelect, claimedRunFromRow } from "./postgres-claimed-run.js";
import { withKeyedTransaction } from "./with-transaction.js";
import { firstClaimWindow, fullClaimWindow, needsWiderWindow } from "../shared/claim-window.js";

type Select = (
  input: Omit<ClaimSelectionInput, "now" | "handlerNames">,
) => readonly ClaimCandidate[];
type Claim = (run: Run, task: Task, token: FencingToken) => Run;

/** The head of the queue as one claim reads it. */
interface QueueHead {
  readonly candidates: readonly ClaimCandidate[];
  /** Threads (`threadKey`) of the candidates that hold a slot. */
  readonly busyThreads: ReadonlySet<string>;
  /** Tasks of exclusive candidates that hold a slot. */
  readonly busyTasks: ReadonlySet<TaskId>;
  /** Launching and running runs: slots taken from the budget. */
  readonly slotsHeld: number;
}

export class PostgresClaim {
  readonly #ctx: PostgresContext;
  readonly #queueHead: PostgresStatement;
  readonly #lockChosen: PostgresStatement;
  /** Takes the claim budget's lock (a literal statement: it travels with BEGIN). */
  readonly #budgetLock: string;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const runs = ctx.runSql.table;
    this.#budgetLock = `SELECT pg_advisory_xact_lock(${int4(CLAIM_BUDGET_LOCK_KIND)}, ${int4(ctx.schema.lockKey)})`;
    // One round trip for what the claim reads under the lock: the head of the queue in claim order, each
    // run with whether its thread (and, exclusive, its task) holds a slot, and the number of slots held.
    // The slot lookups walk the partial unique slot indexes; claims are serialised by the lock, so each
    // round trip and each row read here is paid by every replica waiting behind it.
    const slot = "b.status IN ('launching', 'running')";
    this.#queueHead = prepared(
      `SELECT r.id, r.task_id, r.thread_scope, r.thread_id, r.exclusive,` +
        ` ${timestampToMs("r.not_before")} AS not_before, ${timestampToMs("r.queued_at")} AS queued_at,` +
        ` t.handler_name,` +
        ` EXISTS (SELECT 1 FROM ${runs} AS b WHERE ${slot}` +
        ` AND b.thread_scope = r.thread_scope AND b.thread_id = r.thread_id) AS thread_busy,` +
        ` (r.exclusive AND EXISTS (SELECT 1 FROM ${runs} AS b WHERE ${slot}` +
        ` AND b.exclusive AND b.task_id = r.task_id)) AS task_busy,` +
        ` (SELECT count(*) FROM ${runs} AS b WHERE ${slot})::int4 AS slots_held` +
        ` FROM ${runs} AS r JOIN ${ctx.tasksTable} AS t ON t.id = r.task_id` +
        ` WHERE r.status = 'queued' ORDER BY r.queued_at, r.id LIMIT $1::int4`,
    );
    // By id only: with `status = 'queued'` here the planner, counting on few queued runs, walked the
    // whole queue index instead of the primary key. The status is checked once the rows are locked.
    this.#lockChosen = prepared(
      `${claimedRunSelect(ctx)} WHERE r.id = ANY($1::text[]) FOR UPDATE OF r SKIP LOCKED`,
    );
  }

  async claimRuns(
    request: ClaimRequest,
    select: Select,
    claim: Claim,
  ): Promise<readonly ClaimedRun[]> {
    try {
      return await this.#claimRuns(request, select, claim, false);
    } catch (error) {
      if (!(error instanceof SlotClash)) throw error;
      // That transaction wrote nothing: claim again, with a savepoint to fall back on run by run.
      return this.#claimRuns(request, select, claim, true);
    }
  }

  /**
   * One claim transaction. The budget's lock is taken in the BEGIN round trip, and the claims are written
   * without a savepoint: claims hold the budget's lock, so the busy flags read under it are exact and a
   * slot clash is not expected; if one happens anyway the transaction is abandoned (SlotClash) and
   * claimed again `careful`ly. Every round trip here is paid by every replica waiting for the lock.
   */
  #claimRuns(
    request: ClaimRequest,
    select: Select,
    claim: Claim,
    careful: boolean,
  ): Promise<readonly ClaimedRun[]> {
    return withKeyedTransaction(
      this.#ctx.pool,
      async (client) => {
        // Read after the lock: the previous claimer's writes are committed and visible to this statement.
        let window = firstClaimWindow(request.limit);
        for (;;) {
          const head = await this.#readQueueHead(client, window);
          const room = Math.min(request.maxConcurrentRuns - head.slotsHeld, request.limit);
          if (room <= 0 || head.candidates.length === 0) return [];
          const offered = new Set<string>(head.candidates.map((c) => c.id));
          const chosen = select({ ...head, budget: room })
            // The budget is the store's to keep, whatever `select` returned; and only offered runs.
            .filter((c) => offered.delete(c.id))
            .slice(0, room);
          const read = head.candidates.length;
          if (
            needsWiderWindow({ limit: request.limit, window, read, chosen: chosen.length, room })
          ) {
            window = fullClaimWindow(request.limit);
            continue;
          }
          return this.#claimChosen(client, chosen, claim, careful);
        }
      },
      this.#budgetLock,
    );
  }

  /** The first `window` queued runs, with the slots their threads and tasks hold. */
  async #readQueueHead(client: PostgresClient, window: number): Promise<QueueHead> {
    const rows = (await client.query(this.#queueHead, [window])).rows.map(record);
    const busyThreads = new Set<string>();
    const busyTasks = new Set<TaskId>();
    for (const row of rows) {
      if (row["thread_busy"] === true) {
        busyThreads.add(threadKey(text(row, "thread_scope"), text(row, "thread_id")));
      }
      if (row["task_busy"] === true) busyTasks.add(taskId(text(row, "task_id")));
    }
    const first = rows[0];
    return {
      candidates: rows.map(candidateFromRow),
      busyThreads,
      busyTasks,
      slotsHeld: first === undefined ? 0 : Number(first["slots_held"]),
    };
  }

  /** Locks the chosen runs (skipping any an owner command holds), claims and writes them. */
  async #claimChosen(
    client: PostgresClient,
    chosen: readonly ClaimCandidate[],
    claim: Claim,
    careful: boolean,
  ): Promise<readonly ClaimedRun[]> {
    if (chosen.length === 0) return [];
    const locked = await client.query(this.#lockChosen, [chosen.map((c) => c.id)]);
    const fresh = new Map(
      locked.rows.map(claimedRunFromRow).map((found) => [found.run.id, found] as const),
    );
    const claimed: ClaimedRun[] = [];
    for (const candidate of chosen) {
      const found = fresh.get(candidate.id);
      if (found === undefined) continue;
      const token = fencingToken(randomUUID());
      claimed.push({ run: claim(found.run, found.task, token), task: found.task });
    }
    if (!careful) {
      try {
        const written = await this.#ctx.runSql.writeState(
          client,
          claimed.map((c) => c.run),
        );
        return claimed.filter((c) => written.has(c.run.id));
      } catch (error) {
        if (SLOT_INDEXES.includes(uniqueViolation(error) ?? "")) throw new SlotClash();
        throw error;
      }
    }
    return this.#write(client, claimed);
  }

  /**
   * Writes the claims in one statement after a savepoint; if a run hits a slot index, they are written
   * one by one and the runs that clash are skipped, not an error. The runs were locked and seen queued in
   * this transaction, so the write needs no status guard (one led the planner to join against the whole
   * queue index, row by row).
   */
  async #write(client: PostgresClient, claimed: readonly ClaimedRun[]): Promise<ClaimedRun[]> {
    const runSql = this.#ctx.runSql;
    await client.query("SAVEPOINT claim");
    try {
      const written = await runSql.writeState(
        client,
        claimed.map((c) => c.run),
      );
      return claimed.filter((c) => written.has(c.run.id));
    } catch (error) {
      if (!SLOT_INDEXES.includes(uniqueViolation(error) ?? "")) throw error;
      await client.query("ROLLBACK TO SAVEPOINT claim");
    }
    // Some run's thread or task slot is taken after all: claim one by one, skipping the ones that clash.
    const kept: ClaimedRun[] = [];
    for (const one of claimed) {
      await client.query("SAVEPOINT claim_one");
      try {
        const written = await runSql.writeState(client, [one.run]);
        if (written.has(one.run.id)) kept.push(one);
      } catch (error) {
        if (!SLOT_INDEXES.includes(uniqueViolation(error) ?? "")) throw error;
        await client.query("ROLLBACK TO SAVEPOINT claim_one");
      }
    }
    return kept;
  }
}

/** A claim's slot index refused a run it wrote without a savepoint: the transaction must be redone. */
class SlotClash extends Error {}

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
    threadScope: text(row, "thread_scope"),
    threadId: threadId(text(row, "thread_id")),
    exclusive: row["exclusive"] === true,
    notBefore: instantOf(row, "not_before"),
    queuedAt: instantOf(row, "queued_at"),
    handlerName: typeof handlerName === "string" ? handlerName : null,
  };
}
