/**
 * The deployment examples under deploy/ (docs/deploy.md) name only what exists: every `punctual`
 * command line in the systemd units and the Kubernetes manifests parses with the real command's options,
 * and every probe path answers on the process that the probe targets (the API's routes for `serve`, the
 * worker's probe listener for `worker --metrics-port`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateCommand } from "../../src/cli/migrate-command.js";
import { serveCommand } from "../../src/cli/serve-command.js";
import { workerCommand } from "../../src/cli/worker-command.js";
import { createProbeServer } from "../../src/adapters/metrics/probe-server.js";
import { SchedulerMetrics } from "../../src/adapters/metrics/scheduler-metrics.js";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
const COMMANDS: Record<string, () => Command> = {
  serve: () => serveCommand(),
  worker: () => workerCommand(),
  migrate: () => migrateCommand(),
};

/** The arguments after `punctual` of each command line in the systemd units. */
function systemdCommandLines(): string[][] {
  return ["punctual-api.service", "punctual-worker@.service"].flatMap((unit) =>
    readFileSync(join(DEPLOY, "systemd", unit), "utf8")
      .split("\n")
      .filter((line) => /^ExecStart(Pre)?=/.test(line))
      .map((line) => line.replace(/^[^=]+=/, "").split(/\s+/))
      .map((words) => words.slice(words.indexOf("punctual") + 1).map((w) => w.replace("%i", "1"))),
  );
}

interface Container {
  readonly args?: string[];
  readonly livenessProbe?: { httpGet: { path: string } };
  readonly readinessProbe?: { httpGet: { path: string } };
}

function containers(): Container[] {
  const text = readFileSync(join(DEPLOY, "kubernetes", "punctual.yaml"), "utf8");
  return parseAllDocuments(text).flatMap((doc) => {
    const spec = doc.toJS() as { spec?: { template?: { spec?: { containers?: Container[] } } } };
    return spec.spec?.template?.spec?.containers ?? [];
  });
}

function punctualArgs(args: readonly string[]): string[] {
  return args.slice(args.indexOf("punctual") + 1);
}

/** The long options `args` gives that `name`'s command does not define. */
function unknownFlags(name: string, args: readonly string[]): string[] {
  const command = COMMANDS[name]?.();
  if (command === undefined) return [`no command ${name}`];
  const known = new Set(command.options.flatMap((o) => [o.long, o.negate ? o.long : undefined]));
  return args.filter((a) => a.startsWith("--") && !known.has(a));
}

let api: TestServer;
let probes: { url: string; close(): Promise<void> };

beforeAll(async () => {
  api = await startTestServer();
  const server = createProbeServer({
    metrics: new SchedulerMetrics(),
    notReady: () => Promise.resolve(null),
  });
  probes = { url: await server.listen(0, "127.0.0.1"), close: () => server.close() };
});
afterAll(async () => {
  await api.stop();
  await probes.close();
});

describe("deploy/", () => {
  it("gives the systemd units' command lines only options their commands define", () => {
    const lines = systemdCommandLines();
    expect(lines.map((l) => l[0])).toEqual(["migrate", "serve", "worker"]);
    for (const [name = "", ...args] of lines) expect(unknownFlags(name, args)).toEqual([]);
  });

  it("gives the Kubernetes containers' command lines only options their commands define", () => {
    const lines = containers().map((c) => punctualArgs(c.args ?? []));
    expect(lines.map((l) => l[0])).toEqual(["migrate", "serve", "worker"]);
    for (const [name = "", ...args] of lines) expect(unknownFlags(name, args)).toEqual([]);
  });

  it("probes paths that answer 200 on the process each container runs", async () => {
    for (const container of containers()) {
      const [name] = punctualArgs(container.args ?? []);
      const paths = [container.livenessProbe, container.readinessProbe].flatMap((p) =>
        p === undefined ? [] : [p.httpGet.path],
      );
      if (name === "migrate") continue;
      expect(paths).toEqual(["/healthz", "/readyz"]);
      const base = name === "serve" ? api.url : probes.url;
      for (const path of paths) expect((await fetch(`${base}${path}`)).status).toBe(200);
    }
  });
});
