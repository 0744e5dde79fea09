/**
 * The run state machine (docs/semantics.md#run-statuses): every legal and every illegal move between the nine statuses, and
 * the status groups (active, slot-holding, terminal).
 */
import { describe, expect, it } from "vitest";
import { IllegalTransitionError } from "../../src/domain/errors.js";
import {
  canMove,
  copyRun,
  holdsSlot,
  isActiveRunStatus,
  isTerminalRunStatus,
  moveRun,
  redriveMove,
  RUN_STATUSES,
} from "../../src/domain/run.js";
import type { Run, RunStatus } from "../../src/domain/run.js";
import { applyLaunchOutcome, claimRun, completeRun } from "../../src/domain/run-transitions.js";
import { buildRun, claimed, ctxOf, LEASE_MS, policy, running, T0, TOKEN } from "./builders.js";
import { runId, threadId } from "../../src/domain/ids.js";
import { newRunWithId } from "../../src/domain/new-run.js";

/**
 * The legal moves, written from docs/semantics.md#run-statuses's diagram (plus the retry edge running -> queued of
 * docs/decisions.md, and launching -> cancelled for a run asked to stop before anything started). The
 * redrive edge out of an ended run (docs/semantics.md#redrive) is `redriveMove`'s alone.
 */
const LEGAL: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ["launching", "cancelled", "skipped", "failed"],
  launching: ["running", "queued", "succeeded", "failed", "cancelled"],
  running: ["succeeded", "failed", "timed_out", "cancelled", "queued"],
  succeeded: [],
  failed: [],
  timed_out: [],
  cancelled: [],
  skipped: [],
  missed: [],
};

const PAIRS = RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => ({ from, to })));
const legal = PAIRS.filter(({ from, to }) => LEGAL[from].includes(to));
const illegal = PAIRS.filter(({ from, to }) => !LEGAL[from].includes(to));

describe("the run state machine", () => {
  it("has 14 legal moves and 67 illegal ones among its 9 statuses", () => {
    expect(legal).toHaveLength(14);
    expect(illegal).toHaveLength(67);
  });

  describe.each(legal)("the legal move $from -> $to", ({ from, to }) => {
    it("is allowed by canMove", () => {
      expect(canMove(from, to)).toBe(true);
    });

    it("is made by moveRun, with the changes applied and nothing mutated", () => {
      const run = Object.freeze(buildRun({ status: from }));
      const moved = moveRun(run, to, { error: "why" });
      expect(moved.status).toBe(to);
      expect(moved.error).toBe("why");
      expect(run.status).toBe(from);
    });
  });

  describe.each(illegal)("the illegal move $from -> $to", ({ from, to }) => {
    it("is refused by canMove", () => {
      expect(canMove(from, to)).toBe(false);
    });

    it("makes moveRun throw IllegalTransitionError (illegal_transition)", () => {
      const run = buildRun({ status: from });
      let thrown: unknown;
      try {
        moveRun(run, to);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(IllegalTransitionError);
      expect(thrown).toMatchObject({ code: "illegal_transition", entity: "run", from, to });
    });
  });

  it("never leaves a terminal status by moveRun (born terminal skipped and missed included)", () => {
    for (const from of RUN_STATUSES.filter(isTerminalRunStatus)) {
      expect(RUN_STATUSES.filter((to) => canMove(from, to))).toEqual([]);
    }
  });

  it.each(RUN_STATUSES)(
    "lets a redrive move %s back to queued only when it failed, timed out or was cancelled",
    (from) => {
      const run = buildRun({ status: from });
      if (["failed", "timed_out", "cancelled"].includes(from)) {
        expect(redriveMove(run, { error: "why" })).toMatchObject({
          status: "queued",
          error: "why",
        });
      } else {
        expect(() => redriveMove(run, {})).toThrow(IllegalTransitionError);
      }
    },
  );

  it("ignores a status in the changes: the target status wins", () => {
    const moved = moveRun(buildRun(), "launching", { status: "succeeded", notBefore: T0 });
    expect(moved.status).toBe("launching");
  });
});

describe("run status groups", () => {
  it.each(RUN_STATUSES)("classifies %s as active, slot-holding or terminal", (status) => {
    const active = ["queued", "launching", "running"].includes(status);
    expect(isActiveRunStatus(status)).toBe(active);
    expect(isTerminalRunStatus(status)).toBe(!active);
    expect(holdsSlot(status)).toBe(status === "launching" || status === "running");
  });
});

describe("newRunWithId", () => {
  const newRun = {
    ...(({ id: _id, ...rest }) => rest)(
      buildRun({ status: "queued", threadId: threadId("t-bound"), result: { a: [1] } }),
    ),
  };
  it("is the new run with every field as written and its id", () => {
    const run = newRunWithId(newRun, runId("r-9"));
    expect(run).toEqual({ ...newRun, id: runId("r-9") });
  });
  it("names a fresh thread (null) after the run", () => {
    const run = newRunWithId({ ...newRun, threadId: null }, runId("r-10"));
    expect(run.threadId).toBe("r-10");
  });
});

describe("the runs a transition makes", () => {
  // A run whose fields were written in another order than `Run` declares them (as a row mapping or a
  // spread may), carrying one field `Run` does not have.
  const shuffled = (run: Run): Run =>
    Object.fromEntries([...Object.entries(run).reverse(), ["extra", 1]]) as unknown as Run;
  const order = Object.keys(buildRun());
  const ctx = ctxOf();

  it("have `Run`'s fields in `Run`'s order, whatever order the run they came from had (one shape in V8)", () => {
    const made = [
      copyRun(shuffled(buildRun())),
      moveRun(shuffled(buildRun()), "launching", { attempt: 1 }),
      claimRun(
        shuffled(buildRun()),
        { now: T0, token: TOKEN, leaseMs: LEASE_MS, replicaId: "r1" },
        ctx.options,
      ),
      applyLaunchOutcome(
        shuffled(claimed()),
        { kind: "launched", targetRunId: null },
        { now: T0, task: ctx, policy: policy() },
      ).run,
      completeRun(shuffled(running()), { status: "succeeded" }, { now: T0, task: ctx }).run,
      completeRun(shuffled(claimed()), { status: "failed", error: "no" }, { now: T0, task: ctx })
        .run,
      completeRun(shuffled(running()), { status: "cancelled" }, { now: T0, task: ctx }).run,
      redriveMove(shuffled(buildRun({ status: "failed" })), { error: null }),
    ];
    for (const run of made) expect(Object.keys(run)).toEqual(order);
  });

  it("are fresh copies: the run they came from is left as it was", () => {
    const run = Object.freeze(running());
    const done = completeRun(run, { status: "succeeded" }, { now: T0, task: ctx }).run;
    expect(done).not.toBe(run);
    expect(run.status).toBe("running");
    expect(done).toEqual({ ...run, status: "succeeded", finishedAt: T0, deadlineAt: null });
  });
});
