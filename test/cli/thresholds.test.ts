/**
 * Every threshold of docs/operations.md#thresholds is taken by `serve` and by `worker`, from its flag
 * and from its environment variable, and reaches the running scheduler: each command is started
 * in-process (its commander definition, a fake process around it) with one setting, and the
 * thresholds its start line reports (read back from the built coordinator and policy) show it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { ProcessIo } from "../../src/cli/process-io.js";
import { serveCommand } from "../../src/cli/serve-command.js";
import { THRESHOLD_SETTINGS } from "../../src/cli/threshold-options.js";
import { workerCommand } from "../../src/cli/worker-command.js";
import { waitFor } from "../e2e/process.js";

const dir = mkdtempSync(join(tmpdir(), "punctual-thresholds-"));
writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** One value per setting, and what the start line's `thresholds` then shows. */
const CASES: Readonly<Record<string, { value: string; shows: Record<string, unknown> }>> = {
  "max-concurrent-runs": { value: "7", shows: { maxConcurrentRuns: 7 } },
  "max-active-runs-per-owner": { value: "3", shows: { maxActiveRunsPerOwner: 3 } },
  "owner-max-active-runs": {
    value: "alice=2,bob=5",
    shows: { ownerMaxActiveRuns: { alice: 2, bob: 5 } },
  },
  "max-run-timeout": { value: "PT2H", shows: { maxRunTimeoutMs: 7_200_000 } },
  "lease-seconds": { value: "9", shows: { leaseMs: 9000 } },
  retention: { value: "P2D", shows: { retentionMs: 2 * 86_400_000 } },
  tick: { value: "250ms", shows: { tickMs: 250 } },
  "sweep-period": { value: "PT2S", shows: { sweepMs: 2000 } },
  "shutdown-grace": { value: "3s", shows: { shutdownTimeoutMs: 3000 } },
  "liveness-timeout": { value: "PT15S", shows: { livenessTimeoutMs: 15_000 } },
  "rate-limit": { value: "50/5", shows: { rateLimit: { burst: 50, perSecond: 5 } } },
  "max-tasks-per-owner": { value: "50", shows: { quotas: { tasksPerOwner: 50 } } },
  "min-period": { value: "PT5S", shows: { quotas: { minPeriodMs: 5000 } } },
  "runs-per-minute": { value: "120", shows: { quotas: { runsPerMinute: 120 } } },
  "backfill-runs-per-hour": { value: "300", shows: { quotas: { backfillRunsPerHour: 300 } } },
  "max-calendars-per-owner": { value: "7", shows: { quotas: { calendarsPerOwner: 7 } } },
  "max-calendar-items-per-owner": {
    value: "700",
    shows: { quotas: { calendarItemsPerOwner: 700 } },
  },
  "quota-overrides": {
    value: "alice:runs_per_minute=9000,ci:min_period=PT10S",
    shows: {
      quotas: {
        runsPerMinute: 6000,
        overrides: { alice: { runsPerMinute: 9000 }, ci: { minPeriodMs: 10_000 } },
      },
    },
  },
};

/** Starts `command` with `args` and `env`, waits for its start line, stops it; returns the line. */
async function startLine(
  command: "serve" | "worker",
  args: readonly string[],
  env: Record<string, string>,
  n: number,
): Promise<Record<string, unknown>> {
  const lines: Record<string, unknown>[] = [];
  let signal: (s: NodeJS.Signals) => void = () => undefined;
  const io: ProcessIo = {
    env,
    cwd: dir,
    stdout: () => undefined,
    stderr: (text) => {
      throw new Error(text);
    },
    logger: (level) =>
      pino(
        { level },
        {
          write: (line: string) => {
            lines.push(JSON.parse(line) as Record<string, unknown>);
          },
        },
      ),
    onSignal: (listener) => {
      signal = listener;
      return () => undefined;
    },
    die: () => undefined,
  };
  const database = join(dir, `${command}-${n}.db`);
  const program =
    command === "worker"
      ? workerCommand(io).parseAsync(
          ["--handlers", "handlers.mjs", "--database", database, ...args],
          { from: "user" },
        )
      : serveCommand(io).parseAsync(["--database", database, "--port", "0", ...args], {
          from: "user",
        });
  const started = command === "worker" ? "punctual worker started" : "punctual serving";
  const line = await waitFor(() => lines.find((l) => l.msg === started), {
    timeoutMs: 15_000,
    what: `${command} to start`,
  });
  signal("SIGTERM");
  await program;
  return line;
}

let n = 0;

describe.each(["worker", "serve"] as const)("punctual %s", (command) => {
  const settings = THRESHOLD_SETTINGS.filter((s) => s.only === undefined || s.only === command);

  it("offers every threshold of the table", () => {
    expect(Object.keys(CASES).filter((flag) => settings.some((s) => s.flag === flag))).toEqual(
      settings.map((s) => s.flag),
    );
  });

  it(
    "applies the default quotas when none is given (docs/operations.md#quotas)",
    { timeout: 40_000 },
    async () => {
      const line = await startLine(command, [], {}, n++);
      expect(line.thresholds).toMatchObject({
        quotas: {
          tasksPerOwner: 10_000,
          minPeriodMs: 1_000,
          runsPerMinute: 6_000,
          backfillRunsPerHour: 10_000,
          overrides: {},
        },
      });
    },
  );

  it.each(settings.map((s) => [s.flag, s.env] as const))(
    "takes --%s and $%s",
    { timeout: 40_000 },
    async (flag, env) => {
      const { value, shows } = CASES[flag]!;
      const byFlag = await startLine(command, [`--${flag}`, value], {}, n++);
      expect(byFlag.thresholds).toMatchObject(shows);
      const byEnv = await startLine(command, [], { [env]: value }, n++);
      expect(byEnv.thresholds).toMatchObject(shows);
    },
  );

  it("gives one owner half the budget unless told (docs/semantics.md#fair-share)", async () => {
    const line = await startLine(command, ["--max-concurrent-runs", "7"], {}, n++);
    expect(line.thresholds).toMatchObject({
      maxActiveRunsPerOwner: 3,
      maxRunTimeoutMs: 86_400_000,
    });
    const one = await startLine(command, ["--max-concurrent-runs", "1"], {}, n++);
    expect(one.thresholds).toMatchObject({ maxActiveRunsPerOwner: 1 });
  });
});
