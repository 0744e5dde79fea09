/**
 * Claiming queued runs on PostgreSQL (SPEC 5.3-5.4): one transaction under the claim budget's
 * `pg_advisory_xact_lock`, so the count of launching/running runs read here is never stale when the
 * claims are written. The chosen runs are re-read under `FOR UPDATE SKIP LOCKED` (a run an owner command
 * holds is left alone), claimed with the domain's `claim`, and written in one statement (their state
 * columns only).
 */
import { randomUUID } from "node:crypto";
import { threadKey } from "../../../domain/claim.js";
import type { ClaimCandidate, ClaimSelectionInput } from "../../../domain/claim.js";
import { fencingToken, runId, taskId, threadId } from "../../../domain/ids.js";
import type { FencingToken } from "../../../domain/ids.js";
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
import { withTransaction } from "./with-transaction.js";

type Select = (
  input: Omit<ClaimSelectionInput, "now" | "handlerNames">,
) => readonly ClaimCandidate[];
type Claim = (run: Run, task: Task, token: FencingToken) => Run;

/** How far into the queue the claim step reads: a prefix this long holds every thread's true head. */
export function candidateWindow(limit: number): number {
  return Math.max(4 * limit, 1000);
}

export class PostgresClaim {
  readonly #ctx: PostgresContext;
  readonly #slotsAndQueue: PostgresStatement;
  readonly #lockChosen: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const runs = ctx.runSql.table;
    // One round trip for what the claim reads under the lock: the runs holding slots (`busy`), then the
    // head of the queue in claim order. Claims are serialised by the lock, so each round trip here is
    // paid by every replica waiting behind it.
    this.#slotsAndQueue = prepared(
      `(SELECT true AS busy, r.id, r.task_id, r.thread_scope, r.thread_id, r.exclusive,` +
        ` NULL::int8 AS not_before, NULL::int8 AS queued_at, NULL::text AS handler_name` +
        ` FROM ${runs} AS r WHERE r.status IN ('launching', 'running'))` +
        ` UNION ALL (SELECT false, r.id, r.task_id, r.thread_scope, r.thread_id, r.exclusive,` +
        ` ${timestampToMs("r.not_before")}, ${timestampToMs("r.queued_at")}, t.handler_name` +
        ` FROM ${runs} AS r JOIN ${ctx.tasksTable} AS t ON t.id = r.task_id` +
        ` WHERE r.status = 'queued' ORDER BY r.queued_at, r.id LIMIT $1::int4)` +
        ` ORDER BY busy DESC, queued_at, id`,
    );
    this.#lockChosen = prepared(
      `${claimedRunSelect(ctx)} WHERE r.id = ANY($1::text[]) AND r.status = 'queued'` +
        ` FOR UPDATE OF r SKIP LOCKED`,
    );
  }

  claimRuns(request: ClaimRequest, select: Select, claim: Claim): Promise<readonly ClaimedRun[]> {
    return withTransaction(this.#ctx.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1::int4, $2::int4)", [
        CLAIM_BUDGET_LOCK_KIND,
        this.#ctx.schema.lockKey,
      ]);
      // Read after the lock: the previous claimer's writes are committed and visible to this statement.
      const rows = (
        await client.query(this.#slotsAndQueue, [candidateWindow(request.limit)])
      ).rows.map(record);
      const busy = rows.filter((row) => row["busy"] === true);
      const room = Math.min(request.maxConcurrentRuns - busy.length, request.limit);
      if (room <= 0) return [];
      const candidates = rows.filter((row) => row["busy"] !== true).map(candidateFromRow);
      const offered = new Set<string>(candidates.map((c) => c.id));
      const chosen = select({
        candidates,
        busyThreads: new Set(
          busy.map((row) => threadKey(text(row, "thread_scope"), text(row, "thread_id"))),
        ),
        busyTasks: new Set(
          busy
            .filter((row) => row["exclusive"] === true)
            .map((row) => taskId(text(row, "task_id"))),
        ),
        budget: room,
      })
        // The budget is the store's to keep, whatever `select` returned; and only offered runs.
        .filter((c) => offered.delete(c.id))
        .slice(0, room);
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
      return this.#write(client, claimed);
    });
  }

  /** Writes the claims in one statement; a run that hits a slot index is skipped, not an error. */
  async #write(client: PostgresClient, claimed: readonly ClaimedRun[]): Promise<ClaimedRun[]> {
    const runSql = this.#ctx.runSql;
    await client.query("SAVEPOINT claim");
    try {
      const written = await runSql.writeState(
        client,
        claimed.map((c) => c.run),
        "t.status = 'queued'",
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
        const written = await runSql.writeState(client, [one.run], "t.status = 'queued'");
        if (written.has(one.run.id)) kept.push(one);
      } catch (error) {
        if (!SLOT_INDEXES.includes(uniqueViolation(error) ?? "")) throw error;
        await client.query("ROLLBACK TO SAVEPOINT claim_one");
      }
    }
    return kept;
  }
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
