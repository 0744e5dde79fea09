#!/usr/bin/env node
import { statSync } from "node:fs";
import { holdEarlySignals } from "../dist/cli/early-signals.js";

// `serve` and `worker` take SIGTERM at any moment, even while their modules load: the signal is held
// from here until the command listens (docs/operations.md#what-happens-on-shutdown). The rest of the
// program is imported only now, so that nothing runs before this.
const command = process.argv[2];
const longRunning = command === "serve" || command === "worker";
if (longRunning) holdEarlySignals();
// The program as `npm run build` bundles it (one module per chunk, parsed in a fraction of the CPU the
// ~400 files of dist/cli/ take: docs/benchmarks.md#start-cost); dist/cli/ itself when there is no
// bundle, or one older than what tsc last emitted (tsc run alone since).
const bundled = new URL("../dist/cli-bundle/main.js", import.meta.url);
const emitted = new URL("../dist/cli/main.js", import.meta.url);
const bundleAge = statSync(bundled, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const current = bundleAge >= (statSync(emitted, { throwIfNoEntry: false })?.mtimeMs ?? 0);
const { main } = await import(current ? bundled.href : emitted.href);

// A reader that went away (`punctual tasks list | head`) is not a failure: stop writing, exit quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await main(process.argv);
// A long-running command has stopped what it could within its grace: whatever is left (a connection
// still closing, a handler that ignores its signal) does not keep the process alive.
if (longRunning) process.exit(code);
process.exitCode = code;
