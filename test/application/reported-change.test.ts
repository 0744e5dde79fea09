/**
 * A single run change through the store's one run-change method (src/application/runs/reported-change.ts):
 * a batch of one, its refusal thrown as the callers answer it, its status change reported once, the
 * whole task asked for where a cancel hook needs it.
 */
import { describe, expect, it } from "vitest";
import type { EventSink } from "../../src/application/events/internal-events.js";
import {
  changeEachRun,
  changeOneRun,
  changeRunReported,
} from "../../src/application/runs/reported-change.js";
import { NotFoundError } from "../../src/domain/errors.js";
import type { FencingToken, RunId, TaskId } from "../../src/domain/ids.js";
import type {
  RunChangeRequest,
  RunChangeResult,
  RunRepository,
} from "../../src/domain/ports/run-repository.js";
import type { Run } from "../../src/domain/run.js";
import type { RunChange, RunTaskContext } from "../../src/domain/run-change.js";
import type { Task } from "../../src/domain/task.js";

const TASK = { id: "task-1" as TaskId } as unknown as Task;
const CONTEXT = { scheduleType: "cron", options: {}, targetKind: "webhook" } as RunTaskContext;
const queued = (id: string): Run => ({ id, taskId: TASK.id, status: "queued" }) as unknown as Run;

/** A store whose `changeRuns` applies each request to a queued run, or refuses an unknown one. */
function fakeRuns(known: readonly string[]) {
  const batches: RunChangeRequest[][] = [];
  const runs = {
    changeRuns: (requests: readonly RunChangeRequest[]) => {
      batches.push([...requests]);
      return Promise.resolve(
        requests.map((request): RunChangeResult => {
          if (!known.includes(request.id)) {
            return { kind: "refused", error: new NotFoundError("run", request.id) };
          }
          const change = request.decide(queued(request.id), CONTEXT);
          if (change === null) return { kind: "unchanged" };
          return request.withTask === true
            ? { kind: "changed", change, task: TASK }
            : { kind: "changed", change };
        }),
      );
    },
  } as unknown as RunRepository;
  return { runs, batches };
}

function recorder() {
  const emitted: unknown[] = [];
  const events: EventSink = {
    emit: (event, payload) => {
      emitted.push({ event, payload });
    },
  };
  return { events, emitted };
}

const cancel = (run: Run): RunChange => ({ run: { ...run, status: "cancelled" } });

describe("a single run change", () => {
  it("is a batch of one, fenced when a token is given, its status change reported once", async () => {
    const { runs, batches } = fakeRuns(["r1"]);
    const { events, emitted } = recorder();
    const token = "t1" as FencingToken;
    const change = await changeOneRun(runs, events, "r1" as RunId, { token }, cancel);
    expect(change?.run.status).toBe("cancelled");
    expect(batches).toHaveLength(1);
    expect(batches[0]).toMatchObject([{ id: "r1", token }]);
    expect(batches[0]?.[0]).not.toHaveProperty("withTask");
    expect(emitted).toEqual([
      {
        event: "run:changed",
        payload: { run: change?.run, from: "queued", targetKind: "webhook" },
      },
    ]);
  });

  it("throws a refusal, and answers null with nothing reported when decide changes nothing", async () => {
    const { runs } = fakeRuns(["r1"]);
    const { events, emitted } = recorder();
    await expect(changeOneRun(runs, events, "gone" as RunId, {}, cancel)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(
      changeRunReported(runs, events, "gone" as RunId, {}, cancel),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await changeOneRun(runs, events, "r1" as RunId, {}, () => null)).toBeNull();
    expect(await changeRunReported(runs, events, "r1" as RunId, {}, () => null)).toBeNull();
    expect(emitted).toEqual([]);
  });

  it("asks for the whole task where the change comes back with it, and skips unchanged runs", async () => {
    const { runs, batches } = fakeRuns(["r1", "r2"]);
    const { events } = recorder();
    const changed = await changeEachRun(runs, events, ["r1", "r2"] as RunId[], (run) =>
      run.id === "r1" ? cancel(run) : null,
    );
    expect(changed).toEqual([
      { change: { run: { ...queued("r1"), status: "cancelled" } }, task: TASK },
    ]);
    expect(batches.map((batch) => batch.map((r) => [r.id, r.withTask]))).toEqual([
      [["r1", true]],
      [["r2", true]],
    ]);
  });
});
