/**
 * One punctual replica for the bench, run as its own process: the library exactly as a user runs it
 * (`createScheduler({ store, handlers }).start()`), with one no-op handler, `noop`, that appends each
 * execution to this replica's ledger file. The bench talks to it over IPC (lib/child-protocol.ts).
 */
import { writeFileSync } from "node:fs";
import { createScheduler, postgres, sqlite } from "../src/index.js";
import type { CoordinatorOptions, HandlerContext, Logger } from "../src/index.js";
import { serveBench } from "./lib/child-protocol.js";
import { LedgerWriter } from "./lib/ledger.js";
import { noteStart, traceStatements, writeTrace } from "./lib/replica-trace.js";
import {
  countStatements,
  roundTrips,
  statementTimings,
  timeStatements,
} from "./lib/statement-timing.js";

export interface ReplicaConfig {
  readonly replicaId: string;
  readonly store:
    | { readonly kind: "sqlite"; readonly path: string }
    | { readonly kind: "postgres"; readonly url: string };
  readonly ledger: string;
  readonly maxConcurrentRuns: number;
  readonly coordinator: CoordinatorOptions;
  /** Time every SQL statement and write the table beside the ledger (`--profile`). */
  readonly timeStatements: boolean;
  /** Where to write this replica's timeline (`--trace`, bench/lib/replica-trace.ts), or null. */
  readonly trace: string | null;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ReplicaConfig;
const ledger = new LedgerWriter(config.ledger, config.replicaId);
if (config.timeStatements) timeStatements();
if (config.store.kind === "postgres") countStatements();
if (config.trace !== null) traceStatements();

/** Warnings and errors reach the bench's stderr: a failing replica must not look like a slow one. */
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (obj, msg) => {
    process.stderr.write(`[${config.replicaId}] warn ${msg ?? ""} ${JSON.stringify(obj)}\n`);
  },
  error: (obj, msg) => {
    const err = (obj as { err?: unknown }).err;
    process.stderr.write(
      `[${config.replicaId}] error ${msg ?? ""} ${err instanceof Error ? (err.stack ?? err.message) : JSON.stringify(obj)}\n`,
    );
  },
};

function noop({ run }: HandlerContext): void {
  ledger.record({
    key: run.id,
    occurrence: `${run.task_id}@${Date.parse(run.scheduled_for)}`,
    dueAt: Date.parse(run.fire_at),
    startedAt: Date.now(),
    attempt: run.attempt,
  });
  if (config.trace !== null) noteStart();
}

const scheduler = createScheduler({
  store: config.store.kind === "sqlite" ? sqlite(config.store.path) : postgres(config.store.url),
  handlers: { noop },
  policy: { maxConcurrentRuns: config.maxConcurrentRuns },
  coordinator: config.coordinator,
  replicaId: config.replicaId,
  logger,
});

const bench = serveBench({
  executed: () => ledger.count,
  ...(config.store.kind === "postgres" ? { statements: roundTrips } : {}),
  onStop: async () => {
    await scheduler.stop();
    await ledger.close();
    if (config.trace !== null) writeTrace(config.trace);
    if (config.timeStatements) {
      writeFileSync(
        `${config.ledger}.statements.json`,
        JSON.stringify(statementTimings(), null, 2),
      );
    }
  },
});

try {
  await scheduler.start();
  bench.ready();
} catch (error) {
  bench.fail(error);
}
