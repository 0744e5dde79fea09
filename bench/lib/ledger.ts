/**
 * The execution ledger: every no-op handler (punctual's and the peers') appends one line per execution to
 * its process's file, and the parent reads all files afterwards to count duplicates and losses. A file
 * rather than a table, so that recording an execution does not load the database being measured.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";

const FLUSH_MS = 100;

export interface LedgerEntry {
  /** The run id (punctual) or job id (peers). */
  readonly key: string;
  /** What must execute once: `task_id@scheduled_for` (punctual), the job's identity (peers). */
  readonly occurrence: string;
  /** The instant it was due (nominal or fire time), epoch ms. */
  readonly dueAt: number;
  /** When the handler started, epoch ms. */
  readonly startedAt: number;
  readonly attempt: number;
  readonly worker: string;
}

export class LedgerWriter {
  readonly #fd: number;
  readonly #worker: string;
  readonly #timer: NodeJS.Timeout;
  #count = 0;
  #buffer: string[] = [];
  #flushedAt = Date.now();

  constructor(path: string, worker: string) {
    this.#fd = openSync(path, "a");
    this.#worker = worker;
    this.#timer = setInterval(() => {
      this.#flush();
    }, FLUSH_MS);
  }

  get count(): number {
    return this.#count;
  }

  /**
   * Buffers one execution; the buffer is written synchronously at most every 100 ms, from here as well
   * as from a timer, because a scheduler that never yields its event loop starves timers, and a worker
   * killed then must not have lost more than the last 100 ms.
   */
  record(entry: Omit<LedgerEntry, "worker">): void {
    this.#count++;
    this.#buffer.push(
      `${entry.key}\t${entry.occurrence}\t${entry.dueAt}\t${entry.startedAt}\t${entry.attempt}\t${this.#worker}\n`,
    );
    if (Date.now() - this.#flushedAt >= FLUSH_MS) this.#flush();
  }

  #flush(): void {
    this.#flushedAt = Date.now();
    if (this.#buffer.length === 0) return;
    writeSync(this.#fd, this.#buffer.join(""));
    this.#buffer = [];
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    this.#flush();
    closeSync(this.#fd);
    return Promise.resolve();
  }
}

export function readLedgers(paths: readonly string[]): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const path of paths) {
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      if (line === "") continue;
      const [key, occurrence, dueAt, startedAt, attempt, worker] = line.split("\t");
      entries.push({
        key: key ?? "",
        occurrence: occurrence ?? "",
        dueAt: Number(dueAt),
        startedAt: Number(startedAt),
        attempt: Number(attempt),
        worker: worker ?? "",
      });
    }
  }
  return entries;
}

export interface LedgerCheck {
  /** Executions recorded. */
  readonly executions: number;
  /** Occurrences executed more than once (counted once each), and the extra executions. */
  readonly duplicateOccurrences: number;
  readonly extraExecutions: number;
  /** Expected occurrences never executed. */
  readonly losses: number;
  /** Executions of occurrences nobody expected (should be 0). */
  readonly unexpected: number;
}

/** Compares the ledger with the occurrences that were due. */
export function checkLedger(
  entries: readonly LedgerEntry[],
  expected: ReadonlySet<string>,
): LedgerCheck {
  const seen = new Map<string, number>();
  for (const entry of entries) seen.set(entry.occurrence, (seen.get(entry.occurrence) ?? 0) + 1);
  let duplicateOccurrences = 0;
  let extraExecutions = 0;
  let unexpected = 0;
  for (const [occurrence, times] of seen) {
    if (times > 1) {
      duplicateOccurrences++;
      extraExecutions += times - 1;
    }
    if (!expected.has(occurrence)) unexpected++;
  }
  let losses = 0;
  for (const occurrence of expected) if (!seen.has(occurrence)) losses++;
  return { executions: entries.length, duplicateOccurrences, extraExecutions, losses, unexpected };
}
