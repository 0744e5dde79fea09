/**
 * One replica of a SQLite race test, run as its own process (`node --import tsx`), with its own connection
 * to the shared file. Protocol on stdio: it prints `ready`, waits for a `go` line (the parent's barrier),
 * does its job, prints one JSON line with the outcome and exits. better-sqlite3 is synchronous, so only
 * separate processes give truly concurrent writers.
 */
import Database from "better-sqlite3";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { TaskService } from "../../src/application/tasks/task-service.js";
import { isPunctualError } from "../../src/domain/errors.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import { taskId } from "../../src/domain/ids.js";
import { instant } from "../../src/domain/time.js";
import { ALL } from "../contract/fixtures.js";
import {
  admitAndClaim,
  admitDue,
  claimAndLaunch,
  claimDue,
  recordCompletion,
  recordLaunch,
  triggerRun,
} from "../contract/store-steps.js";
import type { RaceJob, RaceOutcome } from "./sqlite-race-jobs.js";

const job = JSON.parse(process.argv[2] ?? "{}") as RaceJob;
const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => {
  lines.on("line", (line) => {
    if (line.trim() === "go") resolve();
  });
});

function say(value: unknown): void {
  process.stdout.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`);
}

async function perform(store: SqliteStore): Promise<RaceOutcome> {
  switch (job.op) {
    case "migrate":
      return { op: "migrate", status: await store.migrationStatus() };
    case "trigger": {
      const now = instant(job.now);
      /** `inserted`, `repeated` (the key exists) or the code of the error that refused it. */
      let decision: string;
      try {
        const run = await triggerRun(store, ALL, taskId(job.taskId), job.clientKey, now);
        decision = run === null ? "repeated" : "inserted";
      } catch (error) {
        if (!isPunctualError(error)) throw error;
        decision = error.code;
      }
      const launched = job.launch ? await claimAndLaunch(store, now) : [];
      return { op: "trigger", decision, launched: launched.map((run) => run.id) };
    }
    case "admit": {
      let decisions = 0;
      let tasks = 0;
      const fusedClaims: string[] = [];
      for (const round of job.rounds) {
        const report =
          job.fused === undefined
            ? await admitDue(store, instant(round), job.limit)
            : await admitAndClaim(store, instant(round), {
                batch: job.limit,
                limit: job.fused.limit,
                maxConcurrentRuns: job.fused.maxConcurrentRuns,
                replicaId: `replica-${process.pid}`,
              });
        decisions += report.decisions;
        tasks += report.tasks;
        fusedClaims.push(...(report.claimed ?? []).map((c) => c.run.id));
      }
      if (job.fused !== undefined) {
        return { op: "admit", decisions, tasks, launched: fusedClaims };
      }
      const launched = job.launch ? await claimAndLaunch(store, instant(job.rounds.at(-1)!)) : [];
      return { op: "admit", decisions, tasks, launched: launched.map((run) => run.id) };
    }
    case "claim-loop":
      return claimLoop(store, job);
    case "upsert":
      return upsertAll(store, job);
  }
}

/** Upserts each input through a TaskService of this replica's own. */
async function upsertAll(
  store: SqliteStore,
  upsert: Extract<RaceJob, { op: "upsert" }>,
): Promise<RaceOutcome> {
  const newId = createIdGenerator();
  const service = new TaskService({
    store,
    threads: { threadExists: () => Promise.resolve(true) },
    policy: DEFAULT_POLICY,
    newId,
    newSecret: () => "secret",
    handlerNames: null,
    agentServers: null,
    signals: { wake: () => undefined, cancelRequested: () => undefined },
  });
  const answers = [];
  for (const input of upsert.inputs) {
    const answer = await service.upsert(LOCAL_ACTOR, input, null, instant(upsert.now));
    answers.push({ id: answer.task.id, created: answer.created, version: answer.task.version });
  }
  return { op: "upsert", answers };
}

/** Claims, launches, holds and completes runs until none is left active. */
async function claimLoop(
  store: SqliteStore,
  loop: Extract<RaceJob, { op: "claim-loop" }>,
): Promise<RaceOutcome> {
  const now = instant(loop.now);
  const reader = new Database(loop.path, { readonly: true });
  const active = reader.prepare<[], { n: number }>(
    "SELECT count(*) AS n FROM runs WHERE status IN ('queued', 'launching', 'running')",
  );
  const claimed: string[] = [];
  let claims = 0;
  const started = performance.now();
  try {
    while ((active.get()?.n ?? 0) > 0) {
      claims++;
      const batch = await claimDue(store, now, {
        limit: loop.limit,
        maxConcurrentRuns: loop.maxConcurrentRuns,
        replicaId: `replica-${process.pid}`,
      });
      for (const item of batch) {
        claimed.push(item.run.id);
        await recordLaunch(store, item, now);
      }
      // Hold the slots a moment so that the other claimers meet a full budget.
      await sleep(batch.length > 0 ? loop.holdMs : 1);
      for (const item of batch) {
        await recordCompletion(store, item.run.id, { status: "succeeded" }, now);
      }
    }
  } finally {
    reader.close();
  }
  return { op: "claim-loop", claimed, claims, elapsedMs: performance.now() - started };
}

async function main(): Promise<void> {
  const openStore = () => openSqliteStore({ path: job.path, newId: createIdGenerator() });
  // Migrating racers open the store after the barrier; the others are connected before it.
  const early = job.op === "migrate" ? null : await openStore();
  say("ready");
  await go;
  const store = early ?? (await openStore());
  try {
    say({ ok: true, outcome: await perform(store) });
  } catch (error) {
    const described = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    say({ ok: false, error: described });
  } finally {
    await store.close();
    lines.close();
  }
}

await main();
