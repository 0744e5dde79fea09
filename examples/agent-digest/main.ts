/**
 * Runs the digest scheduler against a LangGraph-compatible server: `AGENT_URL` (default
 * `http://127.0.0.1:2024`, `langgraph dev`), `ASSISTANT_ID` (default `agent`), `THREAD_ID` (the team's
 * thread), `TIMEZONE` (default `Europe/Berlin`), `PUNCTUAL_DATABASE_URL` (a SQLite file, default
 * `./agent-digest.db`, or a `postgres://` URL).
 */
import { createScheduler, parseAgentServers, postgres, sqlite } from "punctual";
import { syncDigestTasks } from "./digest.js";

const env = process.env;
const threadId = env["THREAD_ID"];
if (threadId === undefined || threadId === "") {
  console.error("set THREAD_ID to the id of an existing thread on the agent server");
  process.exit(2);
}
const database = env["PUNCTUAL_DATABASE_URL"] ?? "./agent-digest.db";
const agentServers = parseAgentServers(
  JSON.stringify([{ name: "team", url: env["AGENT_URL"] ?? "http://127.0.0.1:2024" }]),
  env,
);

const scheduler = createScheduler({
  store: database.startsWith("postgres") ? postgres(database) : sqlite(database),
  agentServers,
});
await scheduler.start();
const ids = await syncDigestTasks(scheduler, {
  server: "team",
  assistantId: env["ASSISTANT_ID"] ?? "agent",
  threadId,
  timezone: env["TIMEZONE"] ?? "Europe/Berlin",
});
for (const id of ids) {
  const task = await scheduler.tasks.get(id);
  console.log(`${task.title}: next at ${task.next_run_at ?? "never"}`);
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void scheduler.stop();
  });
}
