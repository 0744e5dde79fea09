/**
 * The fenced run-write protocol's decisions written once for every store
 * (src/adapters/storage/shared/run-change-batch.ts): the fence of one change and `changeRuns`'s
 * read-check-decide for one request. The stores' own behaviour is the contract suite's (test/contract/).
 */
import { describe, expect, it, vi } from "vitest";
import { LeaseLostError, NotFoundError } from "../../../../src/domain/errors.js";
import type { FencingToken, RunId, TaskId } from "../../../../src/domain/ids.js";
import type { Run } from "../../../../src/domain/run.js";
import type { RunChange, RunTaskContext } from "../../../../src/domain/run-change.js";
import type { Task } from "../../../../src/domain/task.js";
import {
  applyRunChanges,
  fenceRefusal,
} from "../../../../src/adapters/storage/shared/run-change-batch.js";

const ID = "run-1" as RunId;
const TOKEN = "token-1" as FencingToken;
const TASK_ID = "task-1" as TaskId;
const RUN = { id: ID, taskId: TASK_ID, status: "launching", claimToken: TOKEN } as unknown as Run;
const CONTEXT: RunTaskContext = {
  scheduleType: "cron",
  options: {} as RunTaskContext["options"],
  targetKind: "handler",
};
const TASK = { id: TASK_ID } as unknown as Task;

describe("fenceRefusal", () => {
  it("refuses a missing run (not_found) and a token no longer the run's (lease_lost)", () => {
    expect(fenceRefusal(ID, undefined, TOKEN)).toBeInstanceOf(NotFoundError);
    expect(fenceRefusal(ID, RUN, "other" as FencingToken)).toBeInstanceOf(LeaseLostError);
  });

  it("lets the run's own token, or no token, through", () => {
    expect(fenceRefusal(ID, RUN, TOKEN)).toBeNull();
    expect(fenceRefusal(ID, RUN, undefined)).toBeNull();
  });
});

describe("applyRunChanges, one request", () => {
  const running = (run: Run): RunChange => ({ run: { ...run, status: "running" } });
  const runs = new Map([[ID, RUN]]);
  const tasks = new Map([[TASK_ID, CONTEXT]]);

  it("refuses with the fence's refusal before deciding", () => {
    const decide = vi.fn(running);
    const missing = applyRunChanges([{ id: ID, decide }], new Map(), tasks);
    expect(missing.results[0]).toMatchObject({ kind: "refused" });
    expect(missing.results[0]?.kind === "refused" && missing.results[0].error).toBeInstanceOf(
      NotFoundError,
    );
    const lost = applyRunChanges([{ id: ID, token: "other" as FencingToken, decide }], runs, tasks);
    expect(lost.results[0]?.kind === "refused" && lost.results[0].error).toBeInstanceOf(
      LeaseLostError,
    );
    expect(decide).not.toHaveBeenCalled();
    expect([...missing.runs, ...lost.runs, ...missing.tasks, ...lost.tasks]).toEqual([]);
  });

  it("decides on the run and its task's context, keeping the run's id; unchanged when null", () => {
    const decide = vi.fn((run: Run) => ({
      run: { ...run, id: "elsewhere" as RunId, status: "running" as const },
    }));
    const applied = applyRunChanges([{ id: ID, token: TOKEN, decide }], runs, tasks);
    expect(decide).toHaveBeenCalledWith(RUN, CONTEXT);
    expect(applied.results[0]).toMatchObject({
      kind: "changed",
      change: { run: { id: ID, status: "running" } },
    });
    expect(applied.results[0]).not.toHaveProperty("task");
    expect(applied.runs).toEqual([{ before: RUN, after: { ...RUN, status: "running" } }]);
    expect(applyRunChanges([{ id: ID, token: TOKEN, decide: () => null }], runs, tasks)).toEqual({
      results: [{ kind: "unchanged" }],
      runs: [],
      tasks: [],
    });
  });

  it("hands a changed request with withTask its whole task", () => {
    const whole = new Map([[TASK_ID, TASK]]);
    const applied = applyRunChanges(
      [{ id: ID, decide: running, withTask: true }],
      runs,
      tasks,
      whole,
    );
    expect(applied.results[0]).toMatchObject({ kind: "changed", task: TASK });
    const without = applyRunChanges([{ id: ID, decide: running }], runs, tasks, whole);
    expect(without.results[0]).not.toHaveProperty("task");
  });
});
