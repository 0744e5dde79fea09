/** Temporary SQLite files for the adapter's tests: one directory per test file, removed afterwards. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempFiles {
  /** A fresh database path in the directory. */
  path(name?: string): string;
  remove(): void;
}

export function tempFiles(prefix: string): TempFiles {
  const directory = mkdtempSync(join(tmpdir(), `punctual-${prefix}-`));
  let count = 0;
  return {
    path: (name) => {
      count++;
      return join(directory, `${name ?? "store"}-${count}.db`);
    },
    remove: () => {
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
