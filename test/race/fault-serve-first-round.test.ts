/**
 * `serve` on a database that answers its first claim round slowly (docs/operations.md#starting-replicas):
 * `serve` lets the coordinator end its first claim round before it loads the HTTP stack, but waits for it
 * 2 s at most, so a round held by a lock (a slow or stuck database) never keeps the API, its health
 * checks and its 503s from listening. A real `serve` on a real PostgreSQL with a 300 s statement timeout,
 * while another session holds `task_state` locked: it listens long before that timeout, and once the lock
 * is released its coordinator admits a due task and runs it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../e2e/build.js";
import { createToken, startCli, stopCli, waitFor } from "../e2e/process.js";
import type { CliProcess } from "../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/fault-serve-first-round.test.ts");

describe.skipIf(!runnable)("serve whose first claim round is held by a lock", () => {
  let dir = "";
  let database: PostgresTestDatabase | null = null;
  let serve: CliProcess | null = null;
  let admin: pg.Client | null = null;

  afterAll(async () => {
    if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
    await admin?.end().catch(() => undefined);
    await database?.drop();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it(
    "listens before the round ends, then admits once the lock goes",
    { timeout: 240_000 },
    async () => {
      dir = mkdtempSync(join(tmpdir(), "punctual-first-round-"));
      database = await createPostgresTestDatabase();
      const url = database.url ?? "";
      await ensureBuilt();
      const token = await createToken(url, "first-round");
      admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE punctual.task_state IN ACCESS EXCLUSIVE MODE");
      serve = startCli(
        ["serve", "--database", url, "--port", "0", "--pg-statement-timeout", "300s"],
        {
          cwd: dir,
        },
      );
      const cli = serve;
      // Far below the statement timeout: without the bound, serve would listen only when it ends.
      const base = await waitFor(
        () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1],
        {
          timeoutMs: 90_000,
          what: "serve to listen while its first round waits",
          describe: () => cli.output(),
        },
      );
      const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(20_000) });
      expect(health.status).toBe(200);
      await admin.query("ROLLBACK");
      const created = await fetch(`${base}/v1/tasks`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          title: "after the lock",
          // The server refuses a once task less than 1 s ahead when the request reaches it; a loaded
          // host can take a second between this line and that check, so leave a margin.
          schedule: { type: "once", run_at: new Date(Date.now() + 5_000).toISOString() },
          target: { kind: "handler", name: "log" },
        }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const { task } = (await created.json()) as { task: { id: string } };
      let last = "";
      await waitFor(
        async () => {
          const answer = await fetch(`${base}/v1/tasks/${task.id}/runs`, {
            headers: { authorization: `Bearer ${token}` },
          });
          last = await answer.text();
          const page = JSON.parse(last) as { items: { status: string }[] };
          return page.items.some((run) => run.status === "succeeded") ? true : undefined;
        },
        { timeoutMs: 60_000, what: "the task's run to succeed", describe: () => last },
      );
    },
  );
});
