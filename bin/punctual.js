#!/usr/bin/env node
import { main } from "../dist/adapters/cli/main.js";

// A reader that went away (`punctual tasks list | head`) is not a failure: stop writing, exit quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv);
