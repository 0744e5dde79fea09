/**
 * What Prometheus's own tool accepts (docs/operations.md#metrics-and-probes): `promtool check metrics`
 * finds nothing to say about the exposition of `serve` and of a worker's probe listener, and the alert
 * rules in deploy/prometheus/ pass `promtool check rules` and their unit tests (`promtool test rules`).
 * Debian's `prometheus` package provides promtool; CI installs it (.ci/run), and this test never skips.
 */
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProbeServer } from "../../src/adapters/metrics/probe-server.js";
import { SchedulerMetrics } from "../../src/adapters/metrics/scheduler-metrics.js";
import { call, startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

const PROMTOOL = process.env["PUNCTUAL_PROMTOOL"] ?? "/usr/bin/promtool";
const RULES = join(import.meta.dirname, "..", "..", "deploy", "prometheus");
const run = promisify(execFile);

/** promtool check metrics reads the exposition on stdin; resolves with what it printed. */
function checkMetrics(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ["check", "metrics"]);
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      resolve({ code, output });
    });
    child.stdin.end(text);
  });
}

let api: TestServer;

beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.stop());

describe("promtool", () => {
  it("finds nothing to say about serve's /metrics", async () => {
    const token = await api.token("ann");
    await call(api.url, "GET", "/v1/tasks", { token });
    const scraped = await call(api.url, "GET", "/metrics");
    expect(scraped.status).toBe(200);
    expect(await checkMetrics(String(scraped.body))).toEqual({ code: 0, output: "" });
  });

  it("finds nothing to say about a worker's /metrics", async () => {
    const probes = createProbeServer({
      metrics: new SchedulerMetrics(),
      notReady: () => Promise.resolve(null),
    });
    const url = await probes.listen(0, "127.0.0.1");
    try {
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(await checkMetrics(text)).toEqual({ code: 0, output: "" });
    } finally {
      await probes.close();
    }
  });

  it("accepts the alert rules and passes their unit tests", async () => {
    const checked = await run(PROMTOOL, ["check", "rules", "punctual-alerts.yml"], { cwd: RULES });
    expect(checked.stdout).toContain("SUCCESS: 5 rules found");
    const tested = await run(PROMTOOL, ["test", "rules", "punctual-alerts.test.yml"], {
      cwd: RULES,
    });
    expect(tested.stdout).toContain("SUCCESS");
  });
});
