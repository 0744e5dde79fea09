/**
 * `punctual worker --metrics-port` end to end (docs/operations.md#metrics-and-probes): the built CLI runs as a
 * process on SQLite; its probe port answers `/healthz` and `/readyz`, and `/metrics` shows a handler run
 * counted by outcome and target kind, its launch lateness, the fleet's queue and this replica's heartbeat.
 * On SIGTERM `/readyz` turns 503 while a handler still holds up the drain.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/composition.js";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite.js";
import { ensureBuilt } from "./build.js";
import { startCli, waitFor, waitForOutput } from "./process.js";
import type { CliProcess } from "./process.js";

const HANDLERS = `
import { appendFileSync } from "node:fs";
export default {
  record: () => ({ recorded: true }),
  block: () => {
    appendFileSync(process.env.PUNCTUAL_E2E_OUT, "blocked\\n");
    return new Promise(() => undefined);
  },
};
`;

const NO_HANDLERS = { record: () => undefined, block: () => undefined };

let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "punctual-metrics-"));
  writeFileSync(join(dir, "handlers.mjs"), HANDLERS);
  await ensureBuilt();
}, 240_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The probe URL the worker logged. */
async function probeUrl(worker: CliProcess): Promise<string> {
  await waitForOutput(worker, "metrics and probes listening");
  const match = /"url":"(http:\/\/[^"]+)"/.exec(worker.output());
  if (match?.[1] === undefined) throw new Error(`no probe URL in:\n${worker.output()}`);
  return match[1];
}

/** The value of one sample line of a Prometheus text body (undefined when absent). */
function sample(body: string, series: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("punctual worker --metrics-port", () => {
  it(
    "answers the probes, counts runs by outcome and target kind, and turns unready on SIGTERM",
    { timeout: 90_000 },
    async () => {
      const file = join(dir, "metrics.db");
      const out = join(dir, "blocked.txt");
      writeFileSync(out, "");
      const worker = startCli(
        [
          "worker",
          "--handlers",
          "./handlers.mjs",
          "--metrics-port",
          "0",
          "--shutdown-grace",
          "PT5S",
        ],
        { cwd: dir, env: { PUNCTUAL_DATABASE_URL: file, PUNCTUAL_E2E_OUT: out } },
      );
      try {
        const url = await probeUrl(worker);
        await waitForOutput(worker, "punctual worker started");
        const health = await fetch(`${url}/healthz`);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: "ok" });
        const ready = await waitFor(
          async () => {
            const answer = await fetch(`${url}/readyz`);
            return answer.status === 200 ? answer : undefined;
          },
          { timeoutMs: 10_000, what: "/readyz to answer 200", describe: worker.output },
        );
        expect(await ready.json()).toEqual({ status: "ready" });
        expect((await fetch(`${url}/nope`)).status).toBe(404);
        expect((await fetch(`${url}/metrics`, { method: "POST" })).status).toBe(405);

        const client = createScheduler({ store: sqlite(file), handlers: NO_HANDLERS });
        await client.tasks.create({
          title: "every second",
          schedule: { type: "interval", every: "PT1S" },
          target: { kind: "handler", name: "record" },
        });
        const body = await waitFor(
          async () => {
            const text = await (await fetch(`${url}/metrics`)).text();
            const done = sample(
              text,
              'punctual_runs_total{status="succeeded",reason="",target_kind="handler"}',
            );
            return done !== undefined && done >= 2 ? text : undefined;
          },
          {
            timeoutMs: 30_000,
            what: "two succeeded handler runs in /metrics",
            describe: worker.output,
          },
        );
        expect(
          sample(body, 'punctual_launch_lateness_seconds_count{target_kind="handler"}'),
        ).toBeGreaterThanOrEqual(2);
        expect(sample(body, "punctual_store_up")).toBe(1);
        expect(sample(body, "punctual_queue_runs")).toBeGreaterThanOrEqual(0);
        expect(sample(body, "punctual_queue_oldest_ready_age_seconds")).toBeGreaterThanOrEqual(0);
        expect(sample(body, "punctual_budget_runs")).toBe(16);
        const heartbeatAge = sample(body, "punctual_heartbeat_age_seconds");
        expect(heartbeatAge).toBeGreaterThanOrEqual(0);
        expect(heartbeatAge).toBeLessThan(30);
        expect(sample(body, "punctual_claim_duration_seconds_count")).toBeGreaterThan(0);
        expect(sample(body, "punctual_admission_duration_seconds_count")).toBeGreaterThan(0);
        expect(body).not.toContain("task_id=");

        // A handler that never ends holds the drain: /readyz is 503 from the signal until the exit.
        await client.tasks.create({
          title: "stuck",
          // Whole seconds only (schedules are second-precise), about 1 s ahead.
          schedule: {
            type: "once",
            run_at: new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000).toISOString(),
          },
          target: { kind: "handler", name: "block" },
        });
        await client.stop();
        await waitFor(() => (readFileSync(out, "utf8").includes("blocked") ? true : undefined), {
          timeoutMs: 30_000,
          what: "the blocking handler to start",
          describe: worker.output,
        });
        worker.child.kill("SIGTERM");
        const refused = await waitFor(
          async () => {
            const answer = await fetch(`${url}/readyz`).catch(() => null);
            return answer?.status === 503 ? answer : undefined;
          },
          {
            timeoutMs: 5_000,
            what: "/readyz to answer 503 during the drain",
            describe: worker.output,
          },
        );
        expect(await refused.json()).toMatchObject({
          status: "not_ready",
          detail: "shutting down",
        });
        // The drain ends on its own (the grace, then the handler is aborted and recorded lost): exit 0.
        const exit = await waitFor(
          () =>
            worker.child.exitCode === null
              ? undefined
              : { code: worker.child.exitCode, signal: worker.child.signalCode },
          {
            timeoutMs: 30_000,
            what: "the worker to exit after its drain",
            describe: worker.output,
          },
        );
        expect(exit, worker.output()).toEqual({ code: 0, signal: null });
        expect((await fetch(`${url}/healthz`).catch(() => null))?.status).toBeUndefined();
      } finally {
        if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      }
    },
  );
});
