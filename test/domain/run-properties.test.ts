/**
 * Properties of a run's life (docs/semantics.md#run-statuses, docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation) under any sequence of events, and of claim selection
 * (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch) over any queue. Events the state machine refuses throw IllegalTransitionError and
 * leave the run as it was; every accepted event keeps the run's fields consistent with its status.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { selectClaimable, threadKey } from "../../src/domain/claim.js";
import type { ClaimCandidate } from "../../src/domain/claim.js";
import { IllegalTransitionError } from "../../src/domain/errors.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "../../src/domain/ids.js";
import { isTerminalRunStatus } from "../../src/domain/run.js";
import type { Run } from "../../src/domain/run.js";
import {
  applyLaunchOutcome,
  cancelRun,
  claimRun,
  completeRun,
  heartbeatRun,
} from "../../src/domain/run-transitions.js";
import {
  expireQueuedRun,
  loseRunWithReplica,
  reconcileExpiredClaim,
  timeOutRun,
} from "../../src/domain/run-recovery.js";
import type { RunChange } from "../../src/domain/run-change.js";
import { buildRun, ctxOf, LEASE_MS, MINUTE, plus, policy, T0 } from "./builders.js";

type Event =
  | { kind: "claim" }
  | { kind: "launched" | "busy" | "failed" | "indeterminate" }
  | { kind: "complete"; status: "succeeded" | "failed" | "cancelled" }
  | { kind: "cancel" }
  | { kind: "time_out" }
  | { kind: "expire" }
  | { kind: "lose" }
  | { kind: "reconcile"; finding: "found" | "absent" | "unknown" }
  | { kind: "heartbeat" };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.constant({ kind: "claim" } as const),
  fc.constantFrom("launched", "busy", "failed", "indeterminate").map((kind) => ({ kind })),
  fc.constantFrom("succeeded", "failed", "cancelled").map((status) => ({
    kind: "complete" as const,
    status,
  })),
  fc.constantFrom("cancel", "time_out", "expire", "lose", "heartbeat").map((kind) => ({ kind })),
  fc.constantFrom("found", "absent", "unknown").map((finding) => ({
    kind: "reconcile" as const,
    finding,
  })),
);

function apply(run: Run, event: Event, step: number, maxAttempts: number): RunChange | null {
  const now = plus(T0, step * MINUTE);
  const ctx = ctxOf("interval", { retry: { maxAttempts } });
  switch (event.kind) {
    case "claim":
      return {
        run: claimRun(
          run,
          { now, token: `t${step}` as FencingToken, leaseMs: LEASE_MS, replicaId: "r" },
          ctx.options,
        ),
      };
    case "launched":
      return applyLaunchOutcome(
        run,
        { kind: "launched", targetRunId: `target-${step}` },
        { now, task: ctx, policy: policy() },
      );
    case "busy":
    case "failed":
    case "indeterminate":
      return applyLaunchOutcome(
        run,
        { kind: event.kind, message: event.kind },
        { now, task: ctx, policy: policy() },
      );
    case "complete":
      return completeRun(run, { status: event.status, result: step }, { now, task: ctx });
    case "cancel":
      return cancelRun(run, now, "cancel_requested", ctx);
    case "time_out":
      return timeOutRun(run, now, ctx);
    case "expire":
      return expireQueuedRun(run, now, ctx);
    case "lose":
      return loseRunWithReplica(run, now, ctx);
    case "reconcile":
      return reconcileExpiredClaim(
        run,
        event.finding === "found"
          ? { kind: "found", targetRunId: `found-${step}` }
          : { kind: event.finding },
        { now, task: ctx },
      );
    case "heartbeat":
      return heartbeatRun(run, now, ctx.options);
  }
}

/** The launch-side events the SPEC draws only out of `launching`. */
const LAUNCH_EVENTS = new Set(["launched", "busy", "failed", "indeterminate", "reconcile"]);

function expectConsistent(run: Run, maxAttempts: number): void {
  const terminal = isTerminalRunStatus(run.status);
  // A verdict may overtake the record of its launch: the claim then stays until that record lands.
  expect(
    run.claimToken === null ||
      ["launching", "succeeded", "failed", "cancelled"].includes(run.status),
    "a claim token only while launching, or on a verdict that overtook its launch record",
  ).toBe(true);
  if (run.status === "launching") expect(run.claimToken, "launching holds a claim").not.toBeNull();
  expect(run.finishedAt !== null, "finished_at exactly when terminal").toBe(terminal);
  expect(run.deadlineAt !== null, "a deadline exactly while running").toBe(
    run.status === "running",
  );
  if (run.status === "running") expect(run.launchedAt).not.toBeNull();
  expect(run.failures).toBeLessThanOrEqual(maxAttempts);
  if (run.status === "queued") expect(run.failures).toBeLessThan(maxAttempts);
  if (terminal && run.status !== "succeeded") expect(run.reason).not.toBeNull();
}

describe("a run's life (properties)", () => {
  it("stays consistent under any sequence of events, and only ever moves forward once terminal", () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 25 }),
        fc.integer({ min: 1, max: 3 }),
        (events, maxAttempts) => {
          let run = buildRun();
          let launchedAt = run.launchedAt;
          events.forEach((event, step) => {
            const before = run;
            // The store fences launch outcomes and reconciliation by the claim token, so they only
            // ever reach a launching run (the former domain-bug cases of run-transitions.test.ts go further).
            if (LAUNCH_EVENTS.has(event.kind) && before.status !== "launching") return;
            let change: RunChange | null;
            try {
              change = apply(run, event, step + 1, maxAttempts);
            } catch (error) {
              expect(error).toBeInstanceOf(IllegalTransitionError);
              return;
            }
            if (change === null) return;
            run = change.run;
            expectConsistent(run, maxAttempts);
            if (isTerminalRunStatus(before.status)) {
              // The first verdict wins: a terminal run keeps its status and verdict.
              expect(run).toMatchObject({
                status: before.status,
                reason: before.reason,
                finishedAt: before.finishedAt,
              });
            }
            if (event.kind === "busy" || event.kind === "reconcile") {
              expect(run.failures, "busy and crash recovery never consume failures").toBe(
                before.failures,
              );
            }
            if (launchedAt !== null && run.status === "cancelled") {
              expect(
                run.launchedAt,
                "a cancelled run that escaped keeps launched_at",
              ).not.toBeNull();
            }
            launchedAt = run.launchedAt ?? launchedAt;
            expect(run.attempt).toBe(before.attempt + (event.kind === "claim" ? 1 : 0));
            expect(run.idempotencyKey).toBe(before.idempotencyKey);
            expect(run.queuedAt).toBe(before.queuedAt);
          });
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe("selectClaimable (properties)", () => {
  const candidateArb = fc.record({
    task: fc.integer({ min: 0, max: 4 }),
    thread: fc.integer({ min: 0, max: 4 }),
    scope: fc.constantFrom("handler", "webhook"),
    exclusive: fc.boolean(),
    dueInMs: fc.integer({ min: -5, max: 5 }),
    handler: fc.constantFrom(null, "log", "other"),
  });

  it("never picks two runs of one thread or of one exclusive task, nor a busy, undue or unknown one", () => {
    fc.assert(
      fc.property(
        fc.array(candidateArb, { maxLength: 15 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
        fc.integer({ min: 0, max: 10 }),
        (raw, busyThreadIds, busyTaskIds, budget) => {
          const candidates: ClaimCandidate[] = raw.map((c, i) => ({
            id: `run-${i}` as RunId,
            taskId: `task-${c.task}` as TaskId,
            owner: "alice" as OwnerId,
            threadScope: c.scope,
            threadId: `thread-${c.thread}` as ThreadId,
            exclusive: c.exclusive,
            notBefore: plus(T0, c.dueInMs),
            queuedAt: plus(T0, i),
            handlerName: c.handler,
          }));
          const busyThreads = new Set(
            busyThreadIds.map((t) => threadKey("handler", `thread-${t}`)),
          );
          const busyTasks = new Set(busyTaskIds.map((t) => `task-${t}` as TaskId));
          const chosen = selectClaimable({
            candidates,
            busyThreads,
            busyTasks,
            budget,
            now: T0,
            handlerNames: new Set(["log"]),
          });
          expect(chosen.length).toBeLessThanOrEqual(budget);
          const threads = chosen.map((c) => threadKey(c.threadScope, c.threadId));
          expect(new Set(threads).size).toBe(threads.length);
          const exclusiveTasks = chosen.filter((c) => c.exclusive).map((c) => c.taskId);
          expect(new Set(exclusiveTasks).size).toBe(exclusiveTasks.length);
          for (const c of chosen) {
            expect(c.notBefore).toBeLessThanOrEqual(T0);
            expect(busyThreads.has(threadKey(c.threadScope, c.threadId))).toBe(false);
            if (c.exclusive) expect(busyTasks.has(c.taskId)).toBe(false);
            if (c.handlerName !== null) expect(c.handlerName).toBe("log");
            // FIFO: every earlier run of its thread (and of its task, when exclusive) was chosen too.
            const index = candidates.indexOf(c);
            for (const earlier of candidates.slice(0, index)) {
              const sameThread =
                threadKey(earlier.threadScope, earlier.threadId) ===
                threadKey(c.threadScope, c.threadId);
              const sameExclusiveTask =
                c.exclusive && earlier.exclusive && earlier.taskId === c.taskId;
              if (sameThread || sameExclusiveTask) expect(chosen).toContain(earlier);
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
