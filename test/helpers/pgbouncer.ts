/**
 * PgBouncer for tests (docs/operations.md#pgbouncer): Debian's `pgbouncer` in transaction pooling mode,
 * with its own configuration in a temporary directory and its own free port, in front of the test's
 * PostgreSQL server. Missing, it is a skip with a message on a developer machine and a failure under CI
 * (.ci/run installs it).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const PGBOUNCER = process.env["PUNCTUAL_PGBOUNCER"] ?? "/usr/sbin/pgbouncer";
const IN_CI = (process.env["CI"] ?? "") !== "";

/** Whether the binary is there; under CI a missing one fails the caller's suite instead. */
export function pgbouncerAvailable(file: string): boolean {
  try {
    accessSync(PGBOUNCER, constants.X_OK);
    return true;
  } catch {
    if (IN_CI) return true; // let the start fail loudly: CI must run it
    console.warn(
      `[punctual] SKIPPED ${file}: no pgbouncer at ${PGBOUNCER}. Install it with ` +
        "`sudo apt-get install pgbouncer` (or point PUNCTUAL_PGBOUNCER at a PgBouncer binary).",
    );
    return false;
  }
}

export interface RunningPgbouncer {
  /** `url` with its host and port replaced by the bouncer's. */
  through(url: string): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/** Waits until a query through the bouncer answers (bounded). */
async function answers(url: string, timeoutMs: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${String(child.exitCode)}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error("pgbouncer did not answer", { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * Starts PgBouncer in transaction mode in front of the server of `upstreamUrl` (every database on it,
 * as the URL's user, with no password). Root runs it as `nobody`, since PgBouncer refuses root.
 */
export async function startPgbouncer(upstreamUrl: string): Promise<RunningPgbouncer> {
  const upstream = new URL(upstreamUrl);
  const dir = mkdtempSync(join(tmpdir(), "punctual-pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const config = join(dir, "pgbouncer.ini");
  writeFileSync(
    config,
    [
      "[databases]",
      `* = host=${upstream.hostname} port=${upstream.port || "5432"} user=${decodeURIComponent(upstream.username) || "postgres"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${String(port)}`,
      "unix_socket_dir =",
      "auth_type = any",
      "pool_mode = transaction",
      "max_client_conn = 500",
      "default_pool_size = 20",
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
  );
  chmodSync(config, 0o644);
  const asRoot = process.getuid?.() === 0;
  const child = spawn(PGBOUNCER, [...(asRoot ? ["-u", "nobody"] : []), config], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const through = (url: string): string => {
    const target = new URL(url);
    target.hostname = "127.0.0.1";
    target.port = String(port);
    return target.toString();
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await answers(through(upstreamUrl), 10_000, child);
  } catch (error) {
    await stop();
    throw new Error(`pgbouncer did not start: ${stderr}`, { cause: error });
  }
  return { through, stop };
}
