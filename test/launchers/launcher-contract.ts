/**
 * The launcher contract (docs/semantics.md#launch), once, for every launcher: success returns the target's run id and the
 * thread; only ThreadBusyError, LaunchFailedError and LaunchIndeterminateError escape, keeping the original
 * error as `cause`; an abort through the signal ends the call promptly; an answer for another thread is
 * reported and flagged. Each launcher's test file supplies the scenarios its target can produce.
 */
import { describe, expect, it as vitestIt } from "vitest";
import { silentLogger } from "../../src/application/events/logger.js";
import type { ErrorCode } from "../../src/domain/errors.js";
import {
  isPunctualError,
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../src/domain/errors.js";
import type { LaunchedRun, RunLauncher } from "../../src/domain/ports/run-launcher.js";
import type { Run } from "../../src/domain/run.js";
import type { Task } from "../../src/domain/task.js";
import { callLauncher } from "../../src/runtime/launch-call.js";
import { SystemClock } from "../../src/runtime/clock.js";

export const CONTRACT_SCENARIOS = [
  /** The target starts the run. */
  "succeeds",
  /** The thread has a run active elsewhere. */
  "busy",
  /** The target refuses the run: certainly nothing started. */
  "refused",
  /** The target may have started the run (a 5xx, a connection dropped after the request). */
  "uncertain",
  /** The target cannot be reached: a transport error, to be kept as `cause`. */
  "unreachable",
  /** The target does not answer until the call is aborted. */
  "hangs",
  /** The target answers for a thread other than the requested one. */
  "other_thread",
] as const;
export type ContractScenario = (typeof CONTRACT_SCENARIOS)[number];

export interface ContractRequest {
  readonly run: Run;
  readonly task: Task;
  /** The run id the target is expected to report on success. */
  readonly targetRunId?: string;
  /** For `other_thread`: the thread the target answers for. */
  readonly otherThread?: string;
}

export interface LauncherContractFixture {
  readonly launcher: RunLauncher;
  /** A request that produces `scenario`, or null when this target cannot produce it (the test skips). */
  request(scenario: ContractScenario): ContractRequest | null;
  close(): Promise<void>;
}

const CONTRACT_CODES: readonly ErrorCode[] = [
  "thread_busy",
  "launch_failed",
  "launch_indeterminate",
];
/** What each scenario (but `hangs`, which waits for an abort) must end in: launched, or one of these codes. */
const SCENARIO_OUTCOMES: Record<
  Exclude<ContractScenario, "hangs">,
  "launched" | readonly ErrorCode[]
> = {
  succeeds: "launched",
  other_thread: "launched",
  busy: ["thread_busy"],
  refused: ["launch_failed"],
  uncertain: ["launch_indeterminate"],
  unreachable: ["launch_failed", "launch_indeterminate"],
};
/** How long an aborted launch may take to end: "promptly", with room for a loaded CI machine. */
const PROMPT_MS = 2000;

/** Calls `launch` and records what it did, including a synchronous throw (itself a contract breach). */
async function attempt(
  launcher: RunLauncher,
  request: ContractRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<{ launched: LaunchedRun } | { error: unknown }> {
  let pending: Promise<LaunchedRun>;
  try {
    pending = launcher.launch({ run: request.run, task: request.task, signal });
  } catch (error) {
    throw new Error("launch threw synchronously instead of rejecting", { cause: error });
  }
  try {
    return { launched: await pending };
  } catch (error) {
    return { error };
  }
}

function expectContractError(error: unknown): void {
  expect(isPunctualError(error)).toBe(true);
  if (isPunctualError(error)) expect(CONTRACT_CODES).toContain(error.code);
}

/**
 * A copy of `run` whose id and occurrence fields throw a TypeError when read: a bug inside the launcher
 * (every launcher reads the id at launch; the handler launcher leaves the occurrence to the run's view,
 * made when the handler reads it).
 */
function brokenRun(run: Run, bug: TypeError): Run {
  return new Proxy(run, {
    get(target, property, receiver) {
      if (property === "id" || property === "scheduledFor" || property === "fireAt") throw bug;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/** A contract test bound to the scenario it needs; registered only for targets that can produce it. */
interface ScenarioTest {
  readonly scenario: ContractScenario;
  readonly run: () => Promise<void>;
}

/**
 * Registers the contract for one launcher. `scenarios` lists what its target can produce (a handler is
 * never busy); tests needing another scenario are not registered at all, rather than skipped.
 */
export function describeLauncherContract(
  name: string,
  scenarios: readonly ContractScenario[],
  factory: () => Promise<LauncherContractFixture>,
): void {
  describe(`${name} launcher contract`, () => {
    const it = (title: string, test: ScenarioTest | (() => Promise<void>)): void => {
      if (typeof test === "function") vitestIt(title, test);
      else if (scenarios.includes(test.scenario)) vitestIt(title, test.run);
    };
    const withFixture = (
      scenario: ContractScenario,
      body: (f: LauncherContractFixture, r: ContractRequest) => Promise<void>,
    ): ScenarioTest => ({
      scenario,
      run: async () => {
        const fixture = await factory();
        try {
          const request = fixture.request(scenario);
          if (request === null)
            throw new Error(`${name} declares "${scenario}" but cannot produce it`);
          await body(fixture, request);
        } finally {
          await fixture.close();
        }
      },
    });

    it(
      "returns the target's run id and echoes the requested thread",
      withFixture("succeeds", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        expect(outcome).toHaveProperty("launched");
        if (!("launched" in outcome)) return;
        expect(typeof outcome.launched.targetRunId).toBe("string");
        if (request.targetRunId !== undefined) {
          expect(outcome.launched.targetRunId).toBe(request.targetRunId);
        }
        expect(outcome.launched.threadId).toBe(request.run.threadId);
      }),
    );

    it(
      "reports a busy thread as ThreadBusyError",
      withFixture("busy", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        expect("error" in outcome && outcome.error).toBeInstanceOf(ThreadBusyError);
      }),
    );

    it(
      "reports a certain refusal as LaunchFailedError",
      withFixture("refused", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        expect("error" in outcome && outcome.error).toBeInstanceOf(LaunchFailedError);
      }),
    );

    it(
      "reports a launch that may have started as LaunchIndeterminateError, keeping the cause",
      withFixture("uncertain", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        const error = "error" in outcome ? outcome.error : null;
        expect(error).toBeInstanceOf(LaunchIndeterminateError);
        expect((error as Error).cause).toBeInstanceOf(Error);
      }),
    );

    it(
      "keeps the transport error as the cause of a launch error",
      withFixture("unreachable", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        const error = "error" in outcome ? outcome.error : null;
        expectContractError(error);
        expect(error).not.toBeInstanceOf(ThreadBusyError);
        expect((error as Error).cause).toBeInstanceOf(Error);
      }),
    );

    it(
      "wraps an error thrown inside the launcher as indeterminate, with the original as cause",
      withFixture("succeeds", async ({ launcher }, request) => {
        const bug = new TypeError("cannot read the occurrence");
        const outcome = await attempt(launcher, { ...request, run: brokenRun(request.run, bug) });
        const error = "error" in outcome ? outcome.error : null;
        expect(error).toBeInstanceOf(LaunchIndeterminateError);
        expect((error as Error).cause).toBe(bug);
      }),
    );

    it("ends promptly, launched or with a launch error, when the signal aborts mid-launch", async () => {
      const fixture = await factory();
      try {
        const request = fixture.request("hangs") ?? fixture.request("succeeds");
        expect(request).not.toBeNull();
        const controller = new AbortController();
        const started = performance.now();
        setTimeout(() => {
          controller.abort(new Error("the launch was given up"));
        }, 50);
        const outcome = await attempt(fixture.launcher, request!, controller.signal);
        expect(performance.now() - started).toBeLessThan(PROMPT_MS);
        if ("error" in outcome) {
          expect(outcome.error).toSatisfy(
            (e) => e instanceof LaunchIndeterminateError || e instanceof LaunchFailedError,
          );
        }
      } finally {
        await fixture.close();
      }
    });

    it("settles promptly when the signal is already aborted", async () => {
      const fixture = await factory();
      try {
        const request = fixture.request("hangs") ?? fixture.request("succeeds");
        const controller = new AbortController();
        controller.abort(new Error("shutting down"));
        const started = performance.now();
        const outcome = await attempt(fixture.launcher, request!, controller.signal);
        expect(performance.now() - started).toBeLessThan(PROMPT_MS);
        if ("error" in outcome) expectContractError(outcome.error);
      } finally {
        await fixture.close();
      }
    });

    it("lets only the three launch errors escape, whatever the target does", async () => {
      const fixture = await factory();
      try {
        const judged: string[] = [];
        for (const scenario of scenarios) {
          if (scenario === "hangs") continue;
          const request = fixture.request(scenario);
          if (request === null)
            throw new Error(`${name} declares "${scenario}" but cannot produce it`);
          const outcome = await attempt(fixture.launcher, request);
          const expected = SCENARIO_OUTCOMES[scenario];
          if (expected === "launched") {
            expect(outcome, scenario).toHaveProperty("launched");
          } else {
            expect(outcome, scenario).toHaveProperty("error");
            const error = "error" in outcome ? outcome.error : null;
            expectContractError(error);
            expect(expected, scenario).toContain((error as { code: ErrorCode }).code);
          }
          judged.push(scenario);
        }
        expect(judged).toEqual(scenarios.filter((s) => s !== "hangs"));
      } finally {
        await fixture.close();
      }
    });

    it(
      "reports the thread the target answered for, and the launch is flagged",
      withFixture("other_thread", async ({ launcher }, request) => {
        const outcome = await attempt(launcher, request);
        expect(outcome).toHaveProperty("launched");
        if (!("launched" in outcome)) return;
        expect(outcome.launched.threadId).not.toBe(request.run.threadId);
        if (request.otherThread !== undefined) {
          expect(outcome.launched.threadId).toBe(request.otherThread);
        }
        const answer = await callLauncher({
          launcher,
          clock: new SystemClock(),
          leaseMs: 60_000,
          log: silentLogger,
          run: request.run,
          task: request.task,
          onLateCompletion: () => undefined,
        });
        expect(answer.outcome).toMatchObject({ kind: "launched" });
        expect(answer.outcome).toHaveProperty("threadMismatch");
      }),
    );
  });
}
