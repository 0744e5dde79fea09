/**
 * The truth "a reminder is never sent twice" across a crash: the coordinator runs as a process, is
 * killed (SIGKILL) after the mail went out and before punctual recorded the run's end; the restarted
 * process takes the lost run back, retries it with the same idempotency key, and the mail provider
 * deduplicates: one delivery. Real time: every wait polls observable state with a bounded timeout.
 *
 * The lost run is taken back once its replica has been silent for the liveness timeout
 * (LIVENESS_SECONDS=2 here; 10 s by default), the lease keeping its 60 s default. Retries start after
 * one second (RETRY_INITIAL=PT1S) instead of a minute.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../test/e2e/build.js";
import { waitFor } from "../../../test/e2e/process.js";
import { SqliteMailbox } from "../app/mail-port.js";
import { ANA, COURSE } from "./fixtures.js";

const DAY_MS = 24 * 3600_000;
const day = (fromNow: number): string =>
  new Date(Date.now() + fromNow * DAY_MS).toISOString().slice(0, 10);
/** The semester's course, moved to start ten days from now (the processes run in real time). */
const course = {
  ...COURSE,
  firstSessionAt: new Date(Date.now() + 10 * DAY_MS).toISOString().slice(0, 19) + "Z",
  lastTeachingDay: day(60),
  examDay: day(64),
};

interface AppProcess {
  readonly output: () => string;
  readonly url: () => Promise<string>;
  readonly kill: () => Promise<void>;
}

const running: AppProcess[] = [];
let dir: string;

function startApp(env: Record<string, string>): AppProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "examples", "enrollment-reminders", "main.ts")],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dir,
        PORT: "0",
        LIVENESS_SECONDS: "2",
        RETRY_INITIAL: "PT1S",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const app: AppProcess = {
    output: () => output,
    url: () =>
      waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1], {
        timeoutMs: 30_000,
        what: "the app to listen",
        describe: () => output,
      }),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  running.push(app);
  return app;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "punctual-enrollment-crash-"));
});
afterAll(async () => {
  for (const app of running) await app.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe("enrollment reminders across a crash", () => {
  it("delivers the welcome once when the process dies between the send and its acknowledgement", async () => {
    const first = startApp({ CRASH_AFTER_SEND: "1" });
    const base = await first.url();
    const enrolled = await fetch(`${base}/enrollments`, {
      method: "POST",
      body: JSON.stringify({ id: "e-ana", student: ANA, course }),
    });
    expect(enrolled.status).toBe(201);
    await waitFor(() => (first.output().includes("sent_then_hanging") ? true : undefined), {
      timeoutMs: 20_000,
      what: "the welcome to be sent",
      describe: first.output,
    });
    await first.kill();
    const mailbox = new SqliteMailbox(join(dir, "mailbox.db"));
    try {
      expect(mailbox.delivered()).toHaveLength(1);

      const second = startApp({});
      const again = await second.url();
      const welcome = await waitFor(
        async () => {
          const answer = (await (await fetch(`${again}/enrollments/e-ana`)).json()) as {
            reminders: {
              task: { key: string | null };
              runs: Record<string, unknown>[];
            }[];
          };
          const runs = answer.reminders.find(
            (r) => r.task.key === "enrollment:e-ana:welcome",
          )?.runs;
          return runs?.[0]?.["status"] === "succeeded" ? runs : undefined;
        },
        {
          timeoutMs: 30_000,
          what: "the welcome to be taken back and retried",
          describe: second.output,
        },
      );
      expect(welcome).toHaveLength(1);
      expect(welcome[0]).toMatchObject({ attempt: 2, result: { sent: false, duplicate: true } });
      const delivered = mailbox.delivered();
      expect(delivered).toHaveLength(1);
      expect(delivered[0]?.idempotencyKey).toBe(welcome[0]?.["idempotency_key"]);
    } finally {
      mailbox.close();
    }
  });
});
