/**
 * A PostgreSQL cluster of a test's own: `initdb` in a temporary folder and `pg_ctl` on a free port, so a
 * test may stop and start its database without touching the shared server. As root, the server runs as
 * the `postgres` OS user (PostgreSQL refuses to run as root). `destroy()` stops it and removes the folder.
 */
import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ThrowawayCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** `pg_ctl start`, waiting until it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: active connections are cut, the server is down when it resolves. */
  stop(): Promise<void>;
  /** The server's log so far. */
  log(): string;
  /** Stops the server (immediate) if it runs and removes its folder. Idempotent. */
  destroy(): Promise<void>;
}

/** The newest `/usr/lib/postgresql/<n>/bin` with `initdb`, or `$PUNCTUAL_PG_BIN`; null if none. */
export function postgresBinDir(): string | null {
  const fromEnv = process.env.PUNCTUAL_PG_BIN;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([
    run("id", ["-u", "postgres"]),
    run("id", ["-g", "postgres"]),
  ]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Creates and starts a cluster in a new temporary folder. */
export async function startThrowawayCluster(binDir: string): Promise<ThrowawayCluster> {
  const dir = mkdtempSync(join(tmpdir(), "punctual-pgcluster-"));
  const data = join(dir, "data");
  const logFile = join(dir, "log");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(dir, uid, gid);
  }
  const exec = (tool: string, args: readonly string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(binDir, tool), ...args], { timeout: 60_000 })
      : run(join(binDir, tool), [...args], { timeout: 60_000 });
  const port = await freePort();
  let destroyed: Promise<void> | null = null;
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const cluster: ThrowawayCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: async () => {
      await exec("pg_ctl", ["-D", data, "-o", options, "-l", logFile, "-w", "-t", "60", "start"]);
    },
    stop: async () => {
      await exec("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    destroy: () =>
      (destroyed ??= (async () => {
        await exec("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
  try {
    await exec("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
