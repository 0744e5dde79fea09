/**
 * Child processes for end-to-end tests: the built CLI started as a process, its output collected, and
 * waits that poll an observable condition with a bounded timeout (never a fixed sleep).
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./build.js";

export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything written so far. */
  readonly output: () => string;
  /** Resolves with the exit code and signal when the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node bin/punctual.js ...args`. */
export function startCli(
  args: readonly string[],
  options: { cwd: string; env?: Readonly<Record<string, string>> },
): CliProcess {
  const child = spawn(process.execPath, [join(ROOT, "bin", "punctual.js"), ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      resolve({ code, signal });
    });
  });
  return { child, output: () => output, exited };
}

/**
 * Polls `probe` until it returns a value other than `undefined`, or fails after `timeoutMs` with
 * `describe()` in the message.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  options: { timeoutMs: number; what: string; describe?: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const detail = options.describe === undefined ? "" : `\n${options.describe()}`;
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${options.what}${detail}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the process has written `text`; fails at once if it exits first. */
export function waitForOutput(cli: CliProcess, text: string, timeoutMs = 30_000): Promise<true> {
  return waitFor(
    () => {
      if (cli.output().includes(text)) return true;
      if (cli.child.exitCode !== null || cli.child.signalCode !== null) {
        throw new Error(`the process exited before writing "${text}":\n${cli.output()}`);
      }
      return undefined;
    },
    { timeoutMs, what: `"${text}"`, describe: cli.output },
  );
}

/** Sends `signal` and waits (bounded) for the process to end. */
export async function stopCli(
  cli: CliProcess,
  signal: NodeJS.Signals,
  timeoutMs = 20_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  cli.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      cli.child.kill("SIGKILL");
      reject(
        new Error(`the process did not exit within ${timeoutMs} ms of ${signal}:\n${cli.output()}`),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([cli.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Makes an API token for `owner` with `punctual token create` on the database at `db`. */
export async function createToken(db: string, owner: string): Promise<string> {
  const created = await promisify(execFile)(process.execPath, [
    join(ROOT, "bin", "punctual.js"),
    "token",
    "create",
    "--owner",
    owner,
    "--database",
    db,
    "--json",
  ]);
  return (JSON.parse(created.stdout) as { token: string }).token;
}

/** Runs `node bin/punctual.js ...args` to its end: its exit code and what it wrote on each stream. */
export async function runCli(
  args: readonly string[],
  options: { cwd: string; env?: Readonly<Record<string, string>>; timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "bin", "punctual.js"), ...args],
      {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 30_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}
