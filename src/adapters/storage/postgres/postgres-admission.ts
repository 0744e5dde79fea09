/**
 * Admission on PostgreSQL (docs/semantics.md#the-life-of-an-occurrence): one transaction per batch. Due tasks are found
 * through `task_state_due_idx` and their `task_state` rows locked with `FOR UPDATE SKIP LOCKED` (rows
 * another replica holds are left to it; owner commands lock the same rows), their active runs are locked,
 * the domain decides, and the decisions, cancellations and schedule fields are written in three statements.
 * Writes only the task's schedule fields in `task_state` (and `last_error` when the admission sets it):
 * never the `tasks` row (docs/storage.md#tasks-and-task_state).
 */
import { runId } from "../../../domain/ids.js";
import { newRunWithId } from "../../../domain/new-run.js";
import type { AdmissionTaskFields } from "../../../domain/admission.js";
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import type {
  AdmissionClaim,
  AdmissionRate,
  AdmissionReport,
} from "../../../domain/ports/task-repository.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { FusedClaims, PostgresClaim } from "./postgres-claim.js";
import { OCCURRENCE_INDEX, SLOT_INDEXES, uniqueViolation } from "./postgres-errors.js";
import type { PostgresClient, PostgresStatement } from "./postgres-pool.js";
import { calendarItemsColumn, record, text, taskSelectList } from "./postgres-rows.js";
import { occurrenceTrigger } from "./postgres-run-writes.js";
import { DEFINITION_STAMP } from "./postgres-task-definitions.js";
import type { Column } from "./postgres-sql.js";
import {
  columnArrays,
  msToTimestamp,
  prepared,
  keyedUnnestFrom,
  unnestSource,
  unnestValue,
} from "./postgres-sql.js";
import { withTransaction } from "./with-transaction.js";
import { HeldGates, admitAgainWhenNear, quotasOf } from "./postgres-admission-rate.js";
import type { AdmissionRateGate, PostgresAdmissionRate } from "./postgres-admission-rate.js";
import { admissionReport } from "../shared/admission-report.js";
import { fusableRuns } from "../shared/claim-round.js";

/** What one task's admission writes. */
interface TaskAdmission {
  readonly task: Task;
  readonly fields: AdmissionTaskFields;
  readonly newRuns: readonly Run[];
  readonly runUpdates: readonly Run[];
}

const SCHEDULE_FIELD_COLUMNS: readonly Column[] = [
  { name: "task_id", type: "text" },
  { name: "status", type: "text" },
  { name: "next_run_at", type: "ts" },
  { name: "decided_through", type: "ts" },
  { name: "admitted_count", type: "int8" },
  { name: "sets_last_error", type: "bool" },
  { name: "last_error", type: "text" },
];

const OCCURRENCE_COLUMNS: readonly Column[] = [
  { name: "task_id", type: "text" },
  { name: "scheduled_for", type: "ts" },
];

interface AdmitArgs {
  readonly now: Instant;
  readonly limit: number;
  readonly decide: (task: Task, activeRuns: readonly Run[], admitted?: number) => AdmissionWrite;
  readonly rate?: AdmissionRate | undefined;
  /** The claim to fuse into the admission (docs/storage.md#fused-admit-and-claim). */
  readonly claim?: AdmissionClaim | undefined;
}

/** An admission written without a savepoint met an occurrence already decided. */
class OccurrenceDecided extends Error {}

/**
 * A fused claim's slot key refused a run: another replica's claim committed a lease on the slot number,
 * thread or task after this transaction's snapshot read them free. Admit again fused once (a new
 * snapshot sees that lease, so the usual race is over), then unfused (the runs are queued).
 */
class FusedSlotClash extends Error {}

/** Admissions again fused after a slot clash, before one unfused (docs/storage.md#fused-admit-and-claim). */
const FUSED_RETRIES = 1;

/** Admission's statements, built once per store. */
export class PostgresAdmission {
  readonly #ctx: PostgresContext;
  readonly #due: PostgresStatement;
  readonly #scheduleFields: PostgresStatement;
  readonly #decided: PostgresStatement;
  readonly #markDefects: PostgresStatement;
  readonly #rate: PostgresAdmissionRate;
  readonly #claims: PostgresClaim;

  constructor(ctx: PostgresContext, rate: PostgresAdmissionRate, claims: PostgresClaim) {
    this.#ctx = ctx;
    this.#rate = rate;
    this.#claims = claims;
    const state = ctx.taskStateTable;
    // `due_at` is `next_run_at` while the task is enabled and not defective (a generated column), NULL
    // otherwise: task_state_due_idx holds the due tasks only. Only the state row is locked, and in a
    // subquery of its own, so that the definition is read for the rows locked only: a row another
    // replica holds is skipped at the cost of its state row, not a probe of `tasks` and a whole task's
    // projection (docs/storage.md#the-due-read-locks-before-it-joins). The definition is a lateral
    // probe by primary key: joined, a table never analyzed was read whole into a hash.
    this.#due = prepared(
      `SELECT ${taskSelectList("t", "s")}, t.${DEFINITION_STAMP},` +
        // The calendar versions the due tasks name, in the same read (docs/storage.md#calendar-versions).
        ` ${calendarItemsColumn(`${ctx.schema.quoted}.calendar_versions`, "t")}` +
        ` FROM (SELECT * FROM ${state} AS d WHERE d.due_at <= ${msToTimestamp("$1::int8")}` +
        ` ORDER BY d.due_at, d.task_id LIMIT $2::int4 FOR UPDATE SKIP LOCKED) AS s` +
        ` CROSS JOIN LATERAL (SELECT *, x.xmin::text AS ${DEFINITION_STAMP}` +
        ` FROM ${ctx.tasksTable} AS x WHERE x.id = s.task_id LIMIT 1) AS t` +
        ` ORDER BY s.due_at, s.task_id`,
    );
    this.#scheduleFields = prepared(
      `UPDATE ${state} AS t SET status = u.status,` +
        ` next_run_at = ${unnestValue({ name: "next_run_at", type: "ts" })},` +
        ` decided_through = ${unnestValue({ name: "decided_through", type: "ts" })},` +
        ` admitted_count = u.admitted_count,` +
        ` last_error = CASE WHEN u.sets_last_error THEN u.last_error ELSE t.last_error END` +
        ` ${keyedUnnestFrom(SCHEDULE_FIELD_COLUMNS)}`,
    );
    this.#markDefects = prepared(
      `UPDATE ${state} SET defect_at = ${msToTimestamp("$2::int8")}` +
        ` WHERE task_id = ANY($1::text[]) AND defect_at IS NULL`,
    );
    this.#decided = prepared(
      `SELECT DISTINCT u.task_id FROM ${unnestSource(OCCURRENCE_COLUMNS)}` +
        ` JOIN ${ctx.runSql.table} AS r ON r.task_id = u.task_id AND r.trigger = 'scheduled'` +
        ` AND r.scheduled_for = ${unnestValue({ name: "scheduled_for", type: "ts" })}` +
        // runs_occurrence_uq's third column (migration 34), so the probe is the key's whole.
        ` AND ${occurrenceTrigger("r")} = 's'`,
    );
  }

  async admit(args: AdmitArgs): Promise<AdmissionReport> {
    let careful = false;
    let fuse = args.claim !== undefined;
    let fusedRetries = FUSED_RETRIES;
    for (;;) {
      try {
        return await admitAgainWhenNear(() => this.#admit(args, careful, fuse));
      } catch (error) {
        // That transaction wrote nothing: admit again, with a savepoint to drop the decided tasks'
        // work, or fused again on a new snapshot after a slot clash, then without the fused claim
        // (the runs are then queued).
        if (error instanceof OccurrenceDecided && !careful) careful = true;
        else if (error instanceof FusedSlotClash && fuse) fuse = fusedRetries-- > 0;
        else throw error;
      }
    }
  }

  /**
   * One admission transaction. Written without a savepoint first (the usual case: nothing is decided
   * yet, and a savepoint is one more round trip); an occurrence already decided then abandons the
   * transaction (OccurrenceDecided) and the batch is admitted again `careful`ly.
   */
  #admit(args: AdmitArgs, careful: boolean, fuse: boolean): Promise<AdmissionReport> {
    const ctx = this.#ctx;
    const gates = new HeldGates();
    const claim = fuse ? args.claim : undefined;
    return withTransaction(ctx.pool, async (client) => {
      const due = await client.query(this.#due, [args.now, args.limit]);
      // Each definition decoded once per version of its row, and kept for the claim of its run.
      const read = due.rows.map((row) => ctx.definitions.taskFromRow(row));
      const defective = await this.#markDefective(client, read, args.now);
      const tasks = read.filter((task) => task.defect === null);
      if (tasks.length === 0) return report([], defective, null, claim !== undefined);
      const active = await ctx.runSql.lockActive(
        client,
        tasks.map((t) => t.id),
      );
      const gate = gates.hold(await this.#rate.open(client, quotasOf(tasks, args.rate), args.now));
      let admissions = tasks.map((task) => {
        // No array made per task when no task of the batch has an active run (a burst's usual batch).
        const activeRuns =
          active.length === 0 ? active : active.filter((run) => run.taskId === task.id);
        const write = args.decide(task, activeRuns, gate?.admitted(task.owner));
        gate?.add(write.newRuns);
        return {
          task,
          fields: write.fields,
          newRuns: write.newRuns.map((newRun) => newRunWithId(newRun, runId(ctx.newId()))),
          runUpdates: write.runUpdates,
        };
      });
      gate?.check();
      let fused = claim === undefined ? null : await this.#fuse(client, claim, admissions);
      if (!careful) {
        try {
          await this.#write(client, admissions, gate, fused);
          return report(admissions, defective, fused, claim !== undefined);
        } catch (error) {
          const violated = uniqueViolation(error);
          if (violated === OCCURRENCE_INDEX) throw new OccurrenceDecided();
          if (fused !== null && SLOT_INDEXES.includes(violated ?? "")) throw new FusedSlotClash();
          throw error;
        }
      }
      for (;;) {
        await client.query("SAVEPOINT admission");
        try {
          await this.#write(client, admissions, gate, fused);
          return report(admissions, defective, fused, claim !== undefined);
        } catch (error) {
          const violated = uniqueViolation(error);
          if (fused !== null && SLOT_INDEXES.includes(violated ?? "")) throw new FusedSlotClash();
          if (violated !== OCCURRENCE_INDEX) throw error;
          // An occurrence is already decided (docs/semantics.md#guarantees): drop that task's work, keep the others'.
          await client.query("ROLLBACK TO SAVEPOINT admission");
          const decided = await this.#alreadyDecided(client, admissions);
          if (decided.size === 0) throw error;
          admissions = admissions.filter((a) => !decided.has(a.task.id));
          // The dropped tasks' claims go with them; the others keep their slots (still locked).
          fused = fused === null ? null : dropClaims(fused, decided);
        }
      }
    }).finally(() => {
      gates.close();
    });
  }

  /** Takes the tasks among `read` whose stored fields do not parse out of the due set, once. */
  async #markDefective(
    client: PostgresClient,
    read: readonly Task[],
    now: Instant,
  ): Promise<Task[]> {
    const defective = read.flatMap((task) =>
      task.defect === null ? [] : [{ ...task, defect: { ...task.defect, detectedAt: now } }],
    );
    if (defective.length === 0) return defective;
    await client.query(this.#markDefects, [defective.map((task) => task.id), now]);
    return defective;
  }

  /**
   * The fused claim (docs/storage.md#fused-admit-and-claim): of the batch's new queued runs, those this
   * replica may launch at once, claimed by `PostgresClaim.fuse`; each with its task as admission leaves it.
   */
  async #fuse(
    client: PostgresClient,
    claim: AdmissionClaim,
    admissions: readonly TaskAdmission[],
  ): Promise<FusedClaims | null> {
    const entries = fusableRuns(admissions);
    return this.#claims.fuse(client, claim.request, claim.select, claim.claim, entries);
  }

  async #write(
    client: PostgresClient,
    admissions: readonly TaskAdmission[],
    gate: AdmissionRateGate | null,
    fused: FusedClaims | null,
  ): Promise<void> {
    if (admissions.length === 0) return;
    await gate?.record(
      client,
      admissions.flatMap((a) => a.newRuns),
    );
    const kinds = new Map(admissions.map((a) => [a.task.id, a.task.target.kind]));
    // A fused run is inserted as claimed (launching, its slot bound in the same statement).
    const claimed = new Map(fused?.claimed.map((c) => [c.run.id, c.run] as const));
    await this.#ctx.runSql.insertAll(
      client,
      admissions.flatMap((a) => a.newRuns.map((run) => claimed.get(run.id) ?? run)),
      (run) => {
        const kind = kinds.get(run.taskId);
        if (kind === undefined)
          throw new Error(`admission wrote run ${run.id} of a task it did not admit`);
        return kind;
      },
      fused === null ? undefined : this.#claims.bindSlotsBefore(fused),
    );
    await this.#ctx.runSql.rewrite(
      client,
      admissions.flatMap((a) => a.runUpdates),
    );
    const rows = admissions.map(({ task, fields }) => [
      task.id,
      fields.status,
      fields.nextRunAt,
      fields.decidedThrough,
      fields.admittedCount,
      fields.lastError !== undefined,
      fields.lastError ?? null,
    ]);
    await client.query(this.#scheduleFields, columnArrays(SCHEDULE_FIELD_COLUMNS, rows));
  }

  /** The tasks among `admissions` one of whose new scheduled occurrences already has a decision. */
  async #alreadyDecided(
    client: PostgresClient,
    admissions: readonly TaskAdmission[],
  ): Promise<Set<string>> {
    const occurrences = admissions.flatMap((a) =>
      a.newRuns.filter((r) => r.trigger === "scheduled").map((r) => [r.taskId, r.scheduledFor]),
    );
    const result = await client.query(this.#decided, columnArrays(OCCURRENCE_COLUMNS, occurrences));
    return new Set(result.rows.map((row) => text(record(row), "task_id")));
  }
}

function report(
  admissions: readonly TaskAdmission[],
  defective: readonly Task[],
  fused: FusedClaims | null,
  /** Whether a claim was fused in: then `claimed` is given, empty when nothing was claimed. */
  claimAsked: boolean,
): AdmissionReport {
  const decided = admissionReport(
    admissions.length,
    admissions.flatMap((a) => a.newRuns),
    admissions.flatMap((a) => a.runUpdates),
    defective,
  );
  return claimAsked ? { ...decided, claimed: fused?.claimed ?? [] } : decided;
}

/** `fused` without the claims of `tasks` (dropped from the batch), each kept with its slot. */
function dropClaims(fused: FusedClaims, tasks: ReadonlySet<string>): FusedClaims | null {
  const kept = fused.claimed.flatMap((c, i) =>
    tasks.has(c.run.taskId) ? [] : [{ claim: c, slot: fused.slots[i] ?? 0 }],
  );
  if (kept.length === 0) return null;
  return { claimed: kept.map((k) => k.claim), slots: kept.map((k) => k.slot) };
}
