/**
 * The crash tests' verdict on a run ledger (docs/semantics.md#guarantees, docs/semantics.md#the-life-of-a-run): every nominal time has exactly one
 * decision, no run was launched twice in one attempt, nothing due is missing, and every decision is
 * explained (a launch by an execution, or by a verdict; a non-launch by its skipped/missed record and
 * reason). Pure: it reads rows the caller fetched and returns problems and a summary, never asserts.
 */
import type { Execution } from "./recording-handlers.js";

/** One `runs` row, times in epoch ms. */
export interface LedgerRun {
  readonly id: string;
  readonly taskId: string;
  readonly trigger: string;
  readonly scheduledFor: number;
  readonly status: string;
  readonly reason: string | null;
  readonly missedCount: number | null;
  readonly missedUntil: number | null;
  readonly attempt: number;
  readonly claimedBy: string | null;
}

/** One `tasks` row, times in epoch ms. */
export interface LedgerTask {
  readonly id: string;
  readonly scheduleType: string;
  readonly status: string;
  readonly decidedThrough: number;
}

export interface Ledger {
  readonly tasks: readonly LedgerTask[];
  readonly runs: readonly LedgerRun[];
}

/** What the test created: once tasks with their instant, interval tasks with their first nominal time. */
export interface Workload {
  readonly once: ReadonlyMap<string, number>;
  readonly interval: ReadonlyMap<string, { readonly firstAt: number; readonly everyMs: number }>;
}

export interface CheckOptions {
  readonly workload: Workload;
  readonly executions: readonly Execution[];
  /** Replica ids of processes killed with SIGKILL: only their claims may still be in doubt. */
  readonly killedReplicas: ReadonlySet<string>;
  /**
   * Whether a run claimed by a killed replica may still be `launching`/`running` (its lease has not
   * expired yet), rather than reconciled to a verdict.
   */
  readonly allowInDoubt: boolean;
  /**
   * Queued runs of nominal times from this instant on were admitted just before the workers stopped:
   * pending for the next replica, not lost. Older queued runs are stuck.
   */
  readonly pendingAfter: number;
}

export interface LedgerReport {
  /** Everything that breaks a truth, one line each (empty when the ledger is sound). */
  readonly problems: readonly string[];
  readonly duplicates: number;
  readonly losses: number;
  /** Runs still held by a killed replica's unexpired claim. */
  readonly inDoubt: number;
  /** Queued runs admitted just before the stop (see `pendingAfter`). */
  readonly pending: number;
  /** Scheduled decisions by `status` or `status/reason`. */
  readonly decisions: Readonly<Record<string, number>>;
  /** Nominal times covered by `missed` ranges. */
  readonly missedNominal: number;
  readonly executions: number;
  /** Runs whose claim died with a SIGKILLed replica and ended failed `replica_lost`. */
  readonly lostWithReplica: { readonly executed: number; readonly notExecuted: number };
}

const SKIP_REASONS = new Set([
  "overlap",
  "coalesced",
  "buffer_full",
  "superseded",
  "queue_timeout",
]);
const MISS_REASONS = new Set(["down", "paused", "window"]);
const SHOWN = 8;

/** Collects problems by kind, keeping a few examples of each. */
class Problems {
  readonly #byKind = new Map<string, { count: number; examples: string[] }>();
  duplicates = 0;
  losses = 0;

  add(kind: string, example: string, counts?: "duplicate" | "loss"): void {
    const entry = this.#byKind.get(kind) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < SHOWN) entry.examples.push(example);
    this.#byKind.set(kind, entry);
    if (counts === "duplicate") this.duplicates++;
    if (counts === "loss") this.losses++;
  }

  list(): string[] {
    return [...this.#byKind].map(
      ([kind, { count, examples }]) => `${kind} (${count}): ${examples.join("; ")}`,
    );
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Checks `ledger` against the workload and the executions the handlers recorded. */
export function checkLedger(ledger: Ledger, options: CheckOptions): LedgerReport {
  const problems = new Problems();
  const scheduled = ledger.runs.filter((run) => run.trigger === "scheduled");
  const byTask = groupBy(scheduled, (run) => run.taskId);
  const tasks = new Map(ledger.tasks.map((task) => [task.id, task]));

  const unique = groupBy(scheduled, (run) => `${run.taskId}@${run.scheduledFor}`);
  for (const [key, runs] of unique) {
    if (runs.length > 1) problems.add("two decisions for one nominal time", key, "duplicate");
  }
  for (const [taskId, runAt] of options.workload.once) {
    checkOnce(taskId, runAt, byTask.get(taskId) ?? [], problems);
  }
  for (const [taskId, spec] of options.workload.interval) {
    const task = tasks.get(taskId);
    if (task === undefined) {
      problems.add("interval task missing", taskId, "loss");
      continue;
    }
    checkCoverage(task, spec, byTask.get(taskId) ?? [], problems);
  }
  const lostWithReplica = checkExplained(scheduled, options, problems);
  checkExecutions(ledger.runs, options.executions, problems);

  const decisions: Record<string, number> = {};
  for (const run of scheduled) {
    const key = run.reason === null ? run.status : `${run.status}/${run.reason}`;
    decisions[key] = (decisions[key] ?? 0) + 1;
  }
  return {
    problems: problems.list(),
    duplicates: problems.duplicates,
    losses: problems.losses,
    inDoubt: scheduled.filter((run) => isInDoubt(run)).length,
    pending: scheduled.filter((run) => run.status === "queued").length,
    decisions,
    missedNominal: scheduled
      .filter((run) => run.status === "missed")
      .reduce((sum, run) => sum + (run.missedCount ?? 1), 0),
    executions: options.executions.length,
    lostWithReplica,
  };
}

function checkOnce(
  taskId: string,
  runAt: number,
  runs: readonly LedgerRun[],
  problems: Problems,
): void {
  if (runs.length === 0) {
    problems.add("once task without a decision", `${taskId} due ${iso(runAt)}`, "loss");
    return;
  }
  if (runs.length > 1) problems.add("once task decided twice", taskId, "duplicate");
  for (const run of runs) {
    if (run.scheduledFor !== runAt) {
      problems.add(
        "once decision at the wrong instant",
        `${run.id}: ${iso(run.scheduledFor)} != ${iso(runAt)}`,
      );
    }
  }
}

/** The nominal times a task's decisions cover, a `missed` range counting each instant in it. */
function covered(runs: readonly LedgerRun[], everyMs: number, problems: Problems): number[] {
  return runs.flatMap((run) => {
    if (run.status !== "missed") return [run.scheduledFor];
    const count = run.missedCount ?? 0;
    const until = run.scheduledFor + (count - 1) * everyMs;
    if (count < 1 || run.missedUntil !== until) {
      problems.add(
        "missed range inconsistent",
        `${run.id}: ${count} from ${iso(run.scheduledFor)} until ${String(run.missedUntil)}`,
      );
    }
    return Array.from({ length: Math.max(count, 1) }, (_, i) => run.scheduledFor + i * everyMs);
  });
}

/** Every nominal time from the first one through `decided_through` is covered once, and nothing beyond. */
function checkCoverage(
  task: LedgerTask,
  spec: { readonly firstAt: number; readonly everyMs: number },
  runs: readonly LedgerRun[],
  problems: Problems,
): void {
  const seen = new Map<number, number>();
  for (const at of covered(runs, spec.everyMs, problems)) seen.set(at, (seen.get(at) ?? 0) + 1);
  for (const [at, count] of seen) {
    if (count > 1) {
      problems.add(
        "nominal time decided twice (overlapping decisions)",
        `${task.id}@${iso(at)}`,
        "duplicate",
      );
    }
    const onGrid = at >= spec.firstAt && (at - spec.firstAt) % spec.everyMs === 0;
    if (!onGrid || at > task.decidedThrough) {
      problems.add(
        "decision outside the schedule or past decided_through",
        `${task.id}@${iso(at)} (decided_through ${iso(task.decidedThrough)})`,
      );
    }
  }
  for (let at = spec.firstAt; at <= task.decidedThrough; at += spec.everyMs) {
    if (!seen.has(at))
      problems.add("nominal time without a decision", `${task.id}@${iso(at)}`, "loss");
  }
}

function isInDoubt(run: LedgerRun): boolean {
  return run.status === "launching" || run.status === "running";
}

/** Each decision's status is explained; returns how replica-lost runs split by whether they executed. */
function checkExplained(
  scheduled: readonly LedgerRun[],
  options: CheckOptions,
  problems: Problems,
): { executed: number; notExecuted: number } {
  const executed = new Set(options.executions.map((e) => `${e.run_id}#${e.attempt}`));
  const lost = { executed: 0, notExecuted: 0 };
  for (const run of scheduled) {
    const label = `${run.id} (${run.status}${run.reason === null ? "" : `/${run.reason}`}, attempt ${run.attempt}, claimed by ${String(run.claimedBy)})`;
    switch (run.status) {
      case "succeeded":
        if (!executed.has(`${run.id}#${run.attempt}`)) {
          problems.add("succeeded without an execution", label, "loss");
        }
        break;
      case "failed":
        if (run.reason !== "replica_lost") problems.add("unexpected failure", label);
        else if (run.claimedBy === null || !options.killedReplicas.has(run.claimedBy)) {
          // Handlers end in well under the shutdown timeout: only a SIGKILL loses one.
          problems.add("failed replica_lost though its replica was alive", label);
        } else if (executed.has(`${run.id}#${run.attempt}`)) lost.executed++;
        else lost.notExecuted++;
        break;
      case "launching":
      case "running": {
        const killed = run.claimedBy !== null && options.killedReplicas.has(run.claimedBy);
        if (!killed) problems.add("stuck on a live or stopped replica", label);
        else if (!options.allowInDoubt)
          problems.add("killed replica's claim not reconciled", label);
        break;
      }
      case "queued":
        if (run.scheduledFor < options.pendingAfter) problems.add("left queued", label);
        break;
      case "skipped":
        if (run.reason === null || !SKIP_REASONS.has(run.reason)) {
          problems.add("skipped without a reason", label);
        }
        break;
      case "missed":
        if (run.reason === null || !MISS_REASONS.has(run.reason)) {
          problems.add("missed without a reason", label);
        }
        break;
      default:
        problems.add("unexpected verdict", label);
    }
  }
  return lost;
}

/** At most one execution per run and attempt, only of launched runs, agreeing with the ledger. */
function checkExecutions(
  runs: readonly LedgerRun[],
  executions: readonly Execution[],
  problems: Problems,
): void {
  const byId = new Map(runs.map((run) => [run.id, run]));
  for (const [key, group] of groupBy(executions, (e) => `${e.run_id}#${e.attempt}`)) {
    if (group.length > 1) {
      const where = group.map((e) => e.replica).join(", ");
      problems.add("launched twice in one attempt", `${key} on ${where}`, "duplicate");
    }
  }
  for (const [runId, group] of groupBy(executions, (e) => e.run_id)) {
    const attempts = new Set(group.map((e) => e.attempt));
    // The tasks allow one attempt: a second execution is a blind relaunch (docs/semantics.md#guarantees).
    if (attempts.size > 1) {
      problems.add(
        "launched again in a later attempt",
        `${runId}: ${[...attempts].join(", ")}`,
        "duplicate",
      );
    }
    const run = byId.get(runId);
    const first = group[0]!;
    if (run === undefined) {
      problems.add("execution of a run not in the ledger", runId);
    } else if (
      run.taskId !== first.task_id ||
      run.scheduledFor !== Date.parse(first.scheduled_for) ||
      first.attempt > run.attempt
    ) {
      problems.add("execution disagrees with its run", `${runId}: ${JSON.stringify(first)}`);
    } else if (run.status === "skipped" || run.status === "missed" || run.status === "queued") {
      problems.add("execution of a run that was not launched", `${runId} (${run.status})`);
    }
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [item]);
    else group.push(item);
  }
  return groups;
}

/** A few lines for the test's output. */
export function formatReport(title: string, report: LedgerReport): string {
  const decisions = Object.entries(report.decisions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key} ${count}`)
    .join(", ");
  return [
    `[crash] ${title}`,
    `  decisions: ${decisions}; missed nominal times ${report.missedNominal}`,
    `  executions ${report.executions}; lost with a killed replica: ${report.lostWithReplica.executed} executed, ${report.lostWithReplica.notExecuted} not; in doubt ${report.inDoubt}; queued at stop ${report.pending}`,
    `  duplicates ${report.duplicates}, losses ${report.losses}, problems ${report.problems.length}`,
    ...report.problems.map((p) => `  ! ${p}`),
  ].join("\n");
}
