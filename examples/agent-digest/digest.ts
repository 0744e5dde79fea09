/**
 * A team's agent thread and what punctual runs on it: a daily digest at 08:00 and, on weekdays, a
 * standup summary at 08:05, both in the team's zone, both on the one reused thread the team chats in.
 * This module only describes the tasks; `syncDigestTasks` hands them to a scheduler.
 */
import type { Scheduler, TaskCreateInput } from "punctual";

export interface DigestThread {
  /** The agent server's name in the scheduler's `agentServers`. */
  readonly server: string;
  readonly assistantId: string;
  /** The team's thread on that server (it must exist: punctual checks it at create). */
  readonly threadId: string;
  /** IANA zone of the team's 08:00. */
  readonly timezone: string;
}

/**
 * How late a run may start before it counts as late: the agent is told (`punctual_late` in the run's
 * metadata) and words the digest as a catch-up instead of "this morning's".
 */
export const LATE_AFTER = "PT5M";

/** The two tasks of one team's thread, each launched in FIFO order behind whatever holds the thread. */
export function digestTasks(thread: DigestThread): TaskCreateInput[] {
  const on = (cron: string, title: string, prompt: string): TaskCreateInput => ({
    title,
    schedule: { type: "cron", cron, timezone: thread.timezone },
    target: {
      kind: "agent",
      server: thread.server,
      assistant_id: thread.assistantId,
      input: { messages: [{ role: "user", content: prompt }] },
    },
    // The team's conversation and both tasks share the thread: a run waits its turn (FIFO) while the
    // thread is busy, for at most two hours (after that, today's digest is not worth sending).
    context: { mode: "reuse_thread", thread_id: thread.threadId },
    options: { late_after: LATE_AFTER, queue_timeout: "PT2H" },
    metadata: { example: "agent-digest", thread: thread.threadId },
  });
  return [
    on(
      "0 8 * * *",
      "daily digest",
      "Summarise what happened on this thread since yesterday's digest.",
    ),
    on("5 8 * * 1-5", "standup summary", "List the open questions for today's standup."),
  ];
}

/** Creates the thread's tasks that do not exist yet (found by title among the thread's tasks). */
export async function syncDigestTasks(
  scheduler: Scheduler,
  thread: DigestThread,
): Promise<string[]> {
  const existing = await scheduler.tasks.list({ thread_id: thread.threadId, limit: 200 });
  const titles = new Set(existing.items.map((task) => task.title));
  const ids = existing.items.map((task) => task.id);
  for (const input of digestTasks(thread)) {
    if (titles.has(input.title)) continue;
    const { task } = await scheduler.tasks.create(input);
    ids.push(task.id);
  }
  return ids;
}
