/**
 * A replica's wall-clock timeline (`--trace`, docs/benchmarks.md#profiling): each SQL statement from send
 * to answer, with the connection it went on and the rows it answered (node-postgres's
 * `Client.prototype.query`, wrapped), and each handler start, stamped with the wall time and this
 * process's CPU. Written as JSON when the replica stops; `bench/trace-summary.ts` finds the admission
 * rounds and claims among the transactions. Nothing inside the library is traced: its spans would cost a
 * burst's launches more than they tell.
 */
import { writeFileSync } from "node:fs";
import pg from "pg";

/**
 * One line of the timeline: `at` wall time (ms, fractional), `cpu` this process's CPU so far (ms); a
 * statement's `connection` (numbered in order of first use) and, answered, its `rows`.
 */
export interface TraceEntry {
  readonly at: number;
  readonly cpu: number;
  readonly kind: "sql" | "sql-end" | "start";
  readonly name: string;
  readonly connection?: number;
  readonly rows?: number;
}

const entries: TraceEntry[] = [];

function note(entry: Omit<TraceEntry, "at" | "cpu">): void {
  const cpu = process.cpuUsage();
  entries.push({
    at: performance.timeOrigin + performance.now(),
    cpu: (cpu.user + cpu.system) / 1000,
    ...entry,
  });
}

/** A handler started (the bench's `noop`). */
export function noteStart(): void {
  note({ kind: "start", name: "handler" });
}

function statementName(query: unknown): string {
  const text =
    typeof query === "string"
      ? query
      : typeof query === "object" && query !== null && "text" in query
        ? String(query.text)
        : "?";
  return text.replace(/\s+/g, " ").slice(0, 60);
}

const connections = new WeakMap<object, number>();
let connectionCount = 0;

function connectionOf(client: object): number {
  let id = connections.get(client);
  if (id === undefined) {
    id = ++connectionCount;
    connections.set(client, id);
  }
  return id;
}

/** Wraps `pg.Client.prototype.query` (once) to note each statement's send and answer. */
export function traceStatements(): void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: object, ...args: unknown[]): unknown {
    const name = statementName(args[0]);
    const connection = connectionOf(this);
    note({ kind: "sql", name, connection });
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      return result.then(
        (answer: unknown) => {
          const rows = (answer as { rowCount?: unknown } | undefined)?.rowCount;
          note({
            kind: "sql-end",
            name,
            connection,
            ...(typeof rows === "number" ? { rows } : {}),
          });
          return answer;
        },
        (error: unknown) => {
          note({ kind: "sql-end", name, connection });
          throw error;
        },
      );
    }
    return result;
  };
}

/** Writes the timeline to `file`. */
export function writeTrace(file: string): void {
  writeFileSync(file, JSON.stringify(entries));
}
