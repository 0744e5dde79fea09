/**
 * The agent digest on the virtual clock against the repository's fake LangGraph server (real HTTP):
 * while the team's conversation holds the thread, the 08:00 digest and the 08:05 standup summary wait
 * in FIFO order (the summary is not even tried before the digest has run); once the thread frees they
 * run one after the other, marked late, and the agent is told so in the run's metadata; the next
 * morning, with the thread free, the digest runs on time and the agent is told it is not late.
 */
import { randomUUID } from "node:crypto";
import { parseAgentServers } from "punctual";
import { createTestScheduler } from "punctual/testing";
import type { TestScheduler } from "punctual/testing";
import { afterEach, describe, expect, it } from "vitest";
import { FakeAgentServer } from "../../../test/helpers/fake-agent-server.js";
import type { FakeRun } from "../../../test/helpers/fake-agent-server.js";
import { syncDigestTasks } from "../digest.js";

const open: { fake?: FakeAgentServer; scheduler?: TestScheduler } = {};
afterEach(async () => {
  await open.scheduler?.stop();
  await open.fake?.close();
});

describe("examples/agent-digest", () => {
  it("queues both tasks behind a busy thread in FIFO order, and tells the agent they are late", async () => {
    const fake = await FakeAgentServer.start({ flavor: "python" });
    open.fake = fake;
    const thread = randomUUID();
    fake.createThread(thread);
    // 07:50 in Berlin on Monday 2 March 2026 (UTC+1).
    const scheduler = createTestScheduler({
      start: "2026-03-02T06:50:00Z",
      agentServers: parseAgentServers(
        JSON.stringify([{ name: "team", url: fake.url, webhooks: false }]),
        {},
      ),
    });
    open.scheduler = scheduler;
    const [digest, standup] = await syncDigestTasks(scheduler, {
      server: "team",
      assistantId: "agent",
      threadId: thread,
      timezone: "Europe/Berlin",
    });
    const punctualRuns = (): FakeRun[] =>
      fake
        .runsOf(thread)
        .filter((run) => typeof run.metadata["punctual_run_id"] === "string")
        .reverse();
    const triedBy = (taskId: string | undefined): number =>
      fake.requests.filter(
        (request) =>
          request.method === "POST" &&
          request.path === `/threads/${thread}/runs` &&
          JSON.stringify(request.body).includes(`"punctual_task_id":"${String(taskId)}"`),
      ).length;
    const rt = await scheduler.runtime();
    /** The fake's graph finishes the thread's punctual run; the watcher learns it at its next poll. */
    const finishActive = async (): Promise<void> => {
      const active = punctualRuns().find(
        (run) => run.status === "pending" || run.status === "running",
      );
      expect(active).toBeDefined();
      fake.finish(active!.run_id, "success");
      await rt.watcher.pass();
    };

    // The team talks on the thread from 07:55 to 08:12.
    await scheduler.advanceTo("2026-03-02T06:55:00Z");
    fake.keepBusy(thread);
    await scheduler.advanceTo("2026-03-02T07:12:00Z");
    expect((await scheduler.ledger(digest!)).map((run) => run.status)).toEqual(["queued"]);
    expect((await scheduler.ledger(standup!)).map((run) => run.status)).toEqual(["queued"]);
    expect(triedBy(digest)).toBeGreaterThan(1); // busy, tried again after each back-off
    expect(triedBy(standup)).toBe(0); // behind the digest on the thread: FIFO
    expect(punctualRuns()).toHaveLength(0);

    fake.release(thread);
    await scheduler.advanceBy(10_000);
    expect(punctualRuns().map((run) => run.metadata["punctual_task_id"])).toEqual([digest]);
    await finishActive();
    await scheduler.advanceBy(1_000);
    expect(punctualRuns().map((run) => run.metadata["punctual_task_id"])).toEqual([
      digest,
      standup,
    ]);
    await finishActive();

    const [digestRun] = await scheduler.ledger(digest!);
    const [standupRun] = await scheduler.ledger(standup!);
    expect(digestRun).toMatchObject({ status: "succeeded", late: true });
    expect(standupRun).toMatchObject({ status: "succeeded", late: true });
    expect(digestRun!.lateness_ms).toBeGreaterThanOrEqual(12 * 60_000);
    // What the agent was told: when the digest was due, and that it starts late.
    expect(
      punctualRuns().map((run) => [
        run.metadata["punctual_fire_at"],
        run.metadata["punctual_late"],
      ]),
    ).toEqual([
      ["2026-03-02T07:00:00.000Z", true],
      ["2026-03-02T07:05:00.000Z", true],
    ]);

    // Tuesday 08:00: the thread is free, the digest starts on time and is not late.
    await scheduler.advanceTo("2026-03-03T07:00:30Z");
    const tuesday = punctualRuns().at(-1);
    expect(tuesday?.metadata).toMatchObject({
      punctual_task_id: digest,
      punctual_fire_at: "2026-03-03T07:00:00.000Z",
      punctual_late: false,
    });
  });
});
