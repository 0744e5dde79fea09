/**
 * Client-side timing of every SQL statement a replica sends (with `--profile`): node-postgres's
 * `Client.prototype.query` is wrapped to record, per statement text, how many ran and how long each took
 * from send to answer. With the CPU profile it shows where a replica's time goes on PostgreSQL.
 */
import pg from "pg";

export interface StatementTiming {
  readonly statement: string;
  readonly count: number;
  readonly totalMs: number;
  readonly meanMs: number;
}

const timings = new Map<string, { count: number; totalMs: number }>();

const keys = new Map<string, string>();

function keyOf(text: unknown): string {
  if (typeof text === "string") {
    let key = keys.get(text);
    if (key === undefined) {
      key = text.replace(/\s+/g, " ").slice(0, 160);
      keys.set(text, key);
    }
    return key;
  }
  return keyOfConfig(text);
}

function keyOfConfig(text: unknown): string {
  const raw =
    typeof text === "string"
      ? text
      : typeof text === "object" && text !== null && "text" in text
        ? String(text.text)
        : "?";
  return raw.replace(/\s+/g, " ").slice(0, 160);
}

function record(key: string, startedAt: bigint): void {
  const ms = Number(process.hrtime.bigint() - startedAt) / 1e6;
  const entry = timings.get(key) ?? { count: 0, totalMs: 0 };
  entry.count++;
  entry.totalMs += ms;
  timings.set(key, entry);
}

/** Round trips a replica made to PostgreSQL since `countStatements()`. */
export interface RoundTrips {
  /** Every statement sent (each one round trip). */
  readonly statements: number;
  /** Transactions opened (`BEGIN`); autocommit statements are not counted here. */
  readonly transactions: number;
  /** Heartbeat writes (the replica registry's upsert of `heartbeat_at`). */
  readonly heartbeats: number;
  /** Bytes read from PostgreSQL's sockets: what the rows and answers of those statements weigh. */
  readonly bytesReceived: number;
}

let sent = 0;
let begun = 0;
let beats = 0;

/** The sockets of the clients that sent a statement, and the bytes read by those already closed. */
const sockets = new Set<{ readonly bytesRead: number }>();
let closedBytes = 0;

/** Notes the socket of a client that sends a statement, once; its bytes are counted after it closes too. */
function watchSocket(client: unknown): void {
  const stream = (client as { connection?: { stream?: unknown } }).connection?.stream;
  if (typeof stream !== "object" || stream === null || !("bytesRead" in stream)) return;
  const socket = stream as {
    readonly bytesRead: number;
    once?: (e: string, f: () => void) => void;
  };
  if (sockets.has(socket)) return;
  sockets.add(socket);
  socket.once?.("close", () => {
    closedBytes += socket.bytesRead;
    sockets.delete(socket);
  });
}

function bytesReceived(): number {
  let total = closedBytes;
  for (const socket of sockets) total += socket.bytesRead;
  return total;
}

function textOf(query: unknown): string {
  if (typeof query === "string") return query;
  if (typeof query === "object" && query !== null && "text" in query) return String(query.text);
  return "";
}

/**
 * Counts every statement node-postgres sends (`Client.prototype.query`, wrapped once): with the extended
 * protocol a statement and its parameters go out together and come back as one answer, so each is one
 * round trip. Transactions are counted by their `BEGIN`, heartbeats by the registry's statement. Cheap
 * enough to run in every measurement.
 */
export function countStatements(): void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]): unknown {
    sent++;
    watchSocket(this);
    const text = textOf(args[0]);
    if (text.startsWith("BEGIN")) begun++;
    else if (text.includes(".replicas (id, started_at, heartbeat_at")) beats++;
    return original.apply(this, args);
  };
}

/** Statements sent since `countStatements()`. */
export function statementsSent(): number {
  return sent;
}

/** Statements, transactions and heartbeats sent since `countStatements()`. */
export function roundTrips(): RoundTrips {
  return {
    statements: sent,
    transactions: begun,
    heartbeats: beats,
    bytesReceived: bytesReceived(),
  };
}

/** Wraps `pg.Client.prototype.query` (once). */
export function timeStatements(): void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]): unknown {
    const key = keyOf(args[0]);
    const startedAt = process.hrtime.bigint();
    const last = args.at(-1);
    if (typeof last === "function") {
      args[args.length - 1] = (...answer: unknown[]) => {
        record(key, startedAt);
        return (last as (...a: unknown[]) => unknown)(...answer);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      return result.finally(() => {
        record(key, startedAt);
      });
    }
    return result;
  };
}

export function statementTimings(): StatementTiming[] {
  return [...timings.entries()]
    .map(([statement, t]) => ({
      statement,
      count: t.count,
      totalMs: Math.round(t.totalMs),
      meanMs: Math.round((t.totalMs / t.count) * 100) / 100,
    }))
    .sort((a, b) => b.totalMs - a.totalMs);
}
