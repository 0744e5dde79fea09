/**
 * The jobs the SQLite race tests hand to worker processes (sqlite-race-worker.ts), and the parent's side:
 * spawning the workers, holding them at a barrier, and collecting what each did.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { MigrationStatus } from "../../src/domain/ports/store.js";

export type RaceJob =
  | { readonly op: "migrate"; readonly path: string }
  | {
      readonly op: "trigger";
      readonly path: string;
      readonly taskId: string;
      readonly clientKey: string;
      readonly now: number;
      readonly launch: boolean;
    }
  | {
      readonly op: "admit";
      readonly path: string;
      readonly rounds: readonly number[];
      readonly limit: number;
      readonly launch: boolean;
      /** Each admission given the claim (fused), within this budget; `launched` is what it claimed. */
      readonly fused?: { readonly maxConcurrentRuns: number; readonly limit: number };
    }
  | {
      readonly op: "claim-loop";
      readonly path: string;
      readonly now: number;
      readonly limit: number;
      readonly maxConcurrentRuns: number;
      readonly holdMs: number;
    }
  | {
      readonly op: "upsert";
      readonly path: string;
      readonly now: number;
      /** Task inputs, each with its key, upserted in order as the owner `local`. */
      readonly inputs: readonly unknown[];
    };

export type RaceOutcome =
  | { readonly op: "migrate"; readonly status: MigrationStatus }
  | { readonly op: "trigger"; readonly decision: string; readonly launched: readonly string[] }
  | {
      readonly op: "admit";
      readonly decisions: number;
      readonly tasks: number;
      readonly launched: readonly string[];
    }
  | {
      readonly op: "claim-loop";
      readonly claimed: readonly string[];
      readonly claims: number;
      readonly elapsedMs: number;
    }
  | {
      readonly op: "upsert";
      readonly answers: readonly {
        readonly id: string;
        readonly created: boolean;
        readonly version: number;
      }[];
    };

type Reply = { ok: true; outcome: RaceOutcome } | { ok: false; error: string };

const WORKER = fileURLToPath(new URL("./sqlite-race-worker.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Running {
  readonly ready: Promise<void>;
  readonly reply: Promise<RaceOutcome>;
  go(): void;
  kill(): void;
}

function start(job: RaceJob): Running {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify(job)], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const lines = createInterface({ input: child.stdout });
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let last: Reply | null = null;
  lines.on("line", (line) => {
    if (line === "ready") markReady();
    else last = JSON.parse(line) as Reply;
  });
  const reply = new Promise<RaceOutcome>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const answer = last;
      if (answer?.ok === true && code === 0) resolve(answer.outcome);
      else {
        const reason = answer?.ok === false ? answer.error : `exit ${String(code)}: ${stderr}`;
        reject(new Error(`race worker (${job.op}) failed: ${reason}`));
      }
    });
  });
  // Awaited later by `runWorkers`; marked handled now so that an early failure is not "unhandled".
  reply.catch(() => undefined);
  // A worker that dies before `ready` must not leave the barrier waiting.
  const readyOrDead = Promise.race([ready, reply.then(() => undefined)]);
  return {
    ready: readyOrDead,
    reply,
    go: () => {
      child.stdin.write("go\n");
    },
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * Runs one worker process per job. With `barrier`, every worker is connected and waiting before any is
 * told to go, so their transactions start as close together as the OS allows; without it, each goes as
 * soon as it is ready (natural timing).
 */
export async function runWorkers(
  jobs: readonly RaceJob[],
  options: { readonly barrier: boolean },
): Promise<RaceOutcome[]> {
  const workers = jobs.map(start);
  try {
    if (options.barrier) {
      await Promise.all(workers.map((worker) => worker.ready));
      for (const worker of workers) worker.go();
    } else {
      for (const worker of workers) {
        void worker.ready.then(
          () => {
            worker.go();
          },
          () => undefined,
        );
      }
    }
    return await Promise.all(workers.map((worker) => worker.reply));
  } catch (error) {
    for (const worker of workers) worker.kill();
    throw error;
  }
}
