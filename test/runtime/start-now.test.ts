/**
 * Launches answered at once (docs/semantics.md#launch): a launcher that starts a run in this process
 * (`RunLauncher.startNow`, the handler launcher) is answered synchronously, with no launch timeout
 * watched and no timer set; its answer maps to the same outcomes as `callLauncher`'s, and a run it does
 * not start that way goes to `launch`.
 */
import { describe, expect, it } from "vitest";
import type { HandlerContext } from "../../src/adapters/launchers/handler/handler-definition.js";
import { HandlerLauncher } from "../../src/adapters/launchers/handler/handler-launcher.js";
import { runView, taskView } from "../../src/application/shapes/view-mappers.js";
import { silentLogger } from "../../src/application/events/logger.js";
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../src/domain/errors.js";
import type {
  LaunchedRun,
  RunLauncher,
  StartNowRequest,
} from "../../src/domain/ports/run-launcher.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { startNow } from "../../src/runtime/launch-call.js";
import { buildRun, buildTask, claimed } from "../domain/builders.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

function starting(start: (request: StartNowRequest) => LaunchedRun | null): RunLauncher & {
  launches: number;
} {
  const launcher = {
    launches: 0,
    launch: () => {
      launcher.launches++;
      return Promise.reject(new Error("launch is not called for a run started at once"));
    },
    startNow: start,
    cancel: () => Promise.resolve(),
    reconcile: () => Promise.resolve({ kind: "unknown" as const }),
  };
  return launcher;
}

function request(launcher: RunLauncher, clock = new VirtualClock(t0)) {
  const run = claimed(buildRun());
  return { launcher, clock, log: silentLogger, run, task: buildTask() };
}

describe("startNow", () => {
  it("answers synchronously, watching no timeout: no timer is set", () => {
    const clock = new VirtualClock(t0);
    const launcher = starting(({ run }) => ({ targetRunId: run.id, threadId: run.threadId }));
    const call = request(launcher, clock);
    const answer = startNow(call);
    expect(answer).toEqual({ outcome: { kind: "launched", targetRunId: call.run.id } });
    expect(clock.nextWakeAt()).toBeNull();
    expect(launcher.launches).toBe(0);
  });

  it("maps what the launcher throws to the launch outcomes", () => {
    const outcomes = [
      new ThreadBusyError("busy"),
      new LaunchFailedError("refused"),
      new LaunchIndeterminateError("maybe"),
      new Error("broke its contract"),
    ].map((error) => {
      const launcher = starting(() => {
        throw error;
      });
      return startNow(request(launcher))?.outcome.kind;
    });
    expect(outcomes).toEqual(["busy", "failed", "indeterminate", "indeterminate"]);
  });

  it("is null for a run the launcher does not start at once, or a launcher that starts none", () => {
    expect(startNow(request(starting(() => null)))).toBeNull();
    const plain: RunLauncher = {
      launch: () => Promise.reject(new Error("not called")),
      cancel: () => Promise.resolve(),
      reconcile: () => Promise.resolve({ kind: "unknown" }),
    };
    expect(startNow(request(plain))).toBeNull();
  });

  it("fails a defective task's launch without starting anything", () => {
    let started = 0;
    const launcher = starting(() => {
      started++;
      return null;
    });
    const call = request(launcher);
    const task = buildTask({
      defect: { detectedAt: null, fields: [{ field: "target", message: "not JSON" }] },
    });
    expect(startNow({ ...call, task })?.outcome).toMatchObject({ kind: "failed" });
    expect(started).toBe(0);
  });
});

describe("HandlerLauncher.startNow", () => {
  it("answers before the handler runs, which runs after, and refuses an unknown handler", async () => {
    const ran: string[] = [];
    const launcher = new HandlerLauncher({
      work: ({ run }) => {
        ran.push(run.id);
      },
    });
    const verdicts: string[] = [];
    launcher.connect({
      completed: (_runId, verdict) => {
        verdicts.push(verdict.status);
        return Promise.resolve();
      },
      lost: () => Promise.resolve(),
      heartbeat: () => Promise.resolve(),
    });
    const run = claimed(buildRun());
    const task = buildTask({ target: { kind: "handler", name: "work", input: null } });
    expect(launcher.startNow({ run, task })).toEqual({
      targetRunId: run.id,
      threadId: run.threadId,
    });
    // The answer is given before the handler is called: its verdict can never queue ahead of it.
    expect(ran).toEqual([]);
    await launcher.settled();
    expect(ran).toEqual([run.id]);
    expect(verdicts).toEqual(["succeeded"]);

    const unknown = buildTask({ target: { kind: "handler", name: "other", input: null } });
    expect(() => launcher.startNow({ run: claimed(buildRun()), task: unknown })).toThrow(
      LaunchFailedError,
    );
  });

  it("gives a context whose views are its own enumerable properties, made once, on first read", async () => {
    const seen: HandlerContext[] = [];
    const launcher = new HandlerLauncher({
      look: (context) => {
        seen.push(context);
      },
    });
    const beats: string[] = [];
    launcher.connect({
      completed: () => Promise.resolve(),
      lost: () => Promise.resolve(),
      heartbeat: (runId) => {
        beats.push(runId);
        return Promise.resolve();
      },
    });
    const run = claimed(buildRun());
    const task = buildTask({ target: { kind: "handler", name: "look", input: { n: 1 } } });
    launcher.startNow({ run, task });
    await launcher.settled();
    const [context] = seen;
    if (context === undefined) throw new Error("the handler was not called");
    expect(Object.keys(context)).toEqual(["run", "task", "input", "signal", "heartbeat"]);
    expect(context.run).toEqual(runView(run));
    expect(context.run).toBe(context.run);
    expect(context.task).toEqual(taskView(task));
    expect(context.task).toBe(context.task);
    // A spread sees what the handler sees (a user may pass `{ ...context, input }` on).
    const spread = { ...context };
    expect(spread.run).toBe(context.run);
    expect(spread.task).toBe(context.task);
    expect(spread.input).toEqual({ n: 1 });
    expect(spread.signal).toBeInstanceOf(AbortSignal);
    // A handler may take `heartbeat` apart from its context and call it alone.
    /* eslint-disable @typescript-eslint/unbound-method -- what the test checks */
    expect(spread.heartbeat).toBe(context.heartbeat);
    const { heartbeat } = context;
    /* eslint-enable @typescript-eslint/unbound-method */
    await heartbeat();
    expect(beats).toEqual([run.id]);
  });
});
