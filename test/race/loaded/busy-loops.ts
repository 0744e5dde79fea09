/**
 * The loaded pass's global setup (vitest.loaded.config.ts, docs/operations.md#on-a-loaded-host): two
 * busy-looping processes, one per core of a two-core CI machine, start before the crash tests and are
 * killed after them, so the replicas start, work and stop on a host whose CPU is taken.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";

/** How many busy loops: `PUNCTUAL_BUSY_LOOPS`, else two (what the pass promises to survive). */
function loops(): number {
  const text = process.env.PUNCTUAL_BUSY_LOOPS;
  return text === undefined || text === "" ? 2 : Number(text);
}

export default function setup(): () => Promise<void> {
  const children: ChildProcess[] = Array.from({ length: loops() }, () =>
    spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
  );
  console.log(
    `[punctual] loaded pass: ${children.length} busy loops on ${availableParallelism()} cores`,
  );
  return async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve();
              return;
            }
            child.once("exit", () => {
              resolve();
            });
            child.kill("SIGKILL");
          }),
      ),
    );
  };
}
