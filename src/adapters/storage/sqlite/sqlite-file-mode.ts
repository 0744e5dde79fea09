/**
 * The SQLite file and its `-wal` and `-shm` companions are readable by their owner only (0600): they hold
 * the tasks' signing secrets and the token hashes (docs/security.md#secrets-at-rest). The main file is
 * created 0600 before SQLite opens it (SQLite gives the companions the main file's mode), and every file
 * found with group or other bits afterwards (one made by an older punctual, or under a loose umask) is
 * brought back to its owner's bits.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs";

/** Whether `path` names a file on disk (not `:memory:`, an empty temporary name or a `file:` URI). */
function isPlainFile(path: string): boolean {
  return path !== "" && path !== ":memory:" && !path.startsWith("file:");
}

/** Creates `path` empty with mode 0600 if it does not exist yet (a concurrent creator's file is kept). */
export function createPrivateFile(path: string): void {
  if (!isPlainFile(path) || existsSync(path)) return;
  // "a": creates if missing, never truncates; the mode applies only to a file this call creates.
  closeSync(openSync(path, "a", 0o600));
}

/** The database file, its `-wal` and `-shm`: any that exist lose their group and other bits. */
export function restrictFileModes(path: string): void {
  if (!isPlainFile(path)) return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(file)) continue;
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  }
}
