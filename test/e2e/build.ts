/**
 * Builds `dist/` once for the tests that run the package as shipped (the CLI as a process), and only
 * when a source file is newer than the last build. Concurrent test files share one build through a
 * lock directory.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

export const ROOT = join(import.meta.dirname, "..", "..");
const LOCK = join(ROOT, "dist.build-lock");
const STAMP = join(ROOT, "dist", "index.js");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function isStale(): boolean {
  let built: number;
  try {
    built = statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  return newestMtime(join(ROOT, "src")) > built;
}

function lockAge(): number {
  try {
    return statSync(LOCK).mtimeMs;
  } catch {
    return Date.now();
  }
}

async function waitForLock(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch {
      // A lock left by a killed run (older than any build) is stale.
      if (Date.now() - lockAge() > 300_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${LOCK} still held after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Runs `npm run build` if `dist/` is older than `src/`. */
export async function ensureBuilt(): Promise<void> {
  if (!isStale()) return;
  await waitForLock(180_000);
  try {
    // Another file may have built it while this one waited for the lock.
    if (!isStale()) return;
    try {
      await promisify(execFile)("npm", ["run", "build"], { cwd: ROOT, timeout: 180_000 });
    } catch (error) {
      const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
      throw new Error(`npm run build failed:\n${stdout}${stderr}`, { cause: error });
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
