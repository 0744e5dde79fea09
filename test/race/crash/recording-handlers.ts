/**
 * The handlers module the crash tests' workers load (`punctual worker --handlers`), and the reader of what
 * it recorded. Each execution is appended synchronously, before the handler returns, to a file of its own
 * process: a write that returned is in the kernel and survives the process's SIGKILL, and no database is
 * involved (so it keeps recording while the test's PostgreSQL is down).
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One handler execution, as the handler saw its run. */
export interface Execution {
  readonly run_id: string;
  readonly task_id: string;
  readonly scheduled_for: string;
  readonly attempt: number;
  readonly idempotency_key: string;
  /** The test's label for the process: slot and generation, e.g. `r1.3`. */
  readonly replica: string;
  readonly pid: number;
  readonly at: number;
}

/**
 * `record` appends one line to `$CRASH_OUT/executions-<pid>.jsonl`, then holds the run for a random
 * 0..$CRASH_HANDLER_MAX_MS ms, so a SIGKILL finds handlers mid-run as well as launches mid-claim.
 */
const SOURCE = `
import { appendFileSync } from "node:fs";
import { join } from "node:path";
const file = join(process.env.CRASH_OUT, "executions-" + process.pid + ".jsonl");
const replica = process.env.CRASH_REPLICA ?? "?";
const maxMs = Number(process.env.CRASH_HANDLER_MAX_MS ?? "0");
export default {
  record: async ({ run }) => {
    const line = {
      run_id: run.id,
      task_id: run.task_id,
      scheduled_for: run.scheduled_for,
      attempt: run.attempt,
      idempotency_key: run.idempotency_key,
      replica,
      pid: process.pid,
      at: Date.now(),
    };
    appendFileSync(file, JSON.stringify(line) + "\\n");
    if (maxMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * maxMs));
    return { replica };
  },
};
`;

/** The handler names the module exports (a client process registers them to create tasks naming them). */
export const RECORDING_HANDLER_NAMES = { record: () => undefined } as const;

/** Writes the module into `dir`; returns its path. */
export function writeRecordingHandlers(dir: string): string {
  const path = join(dir, "handlers.mjs");
  writeFileSync(path, SOURCE);
  return path;
}

/**
 * Every execution recorded under `dir`, by every process. Each record is one append (one write(2) of
 * a short line, which a kill cannot tear), so a text after the last newline is a write this read
 * overlapped: it is left for the next read. Any other line that does not parse is an error.
 */
export function readExecutions(dir: string): Execution[] {
  const executions: Execution[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^executions-\d+\.jsonl$/.test(name)) continue;
    const text = readFileSync(join(dir, name), "utf8");
    const complete = text.slice(0, text.lastIndexOf("\n") + 1);
    for (const line of complete.split("\n")) {
      if (line !== "") executions.push(JSON.parse(line) as Execution);
    }
  }
  return executions;
}
