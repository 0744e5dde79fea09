/**
 * Runs the enrollment reminder coordinator: punctual on `PUNCTUAL_DATABASE_URL` (a SQLite file, default
 * `./reminders.db`, or a `postgres://` URL), the school's enrollments and the stand-in mail provider in
 * SQLite files under `DATA_DIR` (default `.`), and the HTTP entry on `PORT` (default 3100, 0 for any).
 * `LIVENESS_SECONDS`, `RETRY_INITIAL` and `CRASH_AFTER_SEND=1` exist for the crash test.
 */
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { createScheduler, postgres, sqlite } from "punctual";
import { EnrollmentRepository } from "./app/enrollment-repository.js";
import { schoolHttp } from "./app/http.js";
import { SqliteMailbox } from "./app/mail-port.js";
import { REMINDER_HANDLER } from "./app/reminder-tasks.js";
import { School } from "./app/school.js";
import { sendReminder } from "./app/send-reminder.js";

const env = process.env;
const dataDir = env["DATA_DIR"] ?? ".";
const database = env["PUNCTUAL_DATABASE_URL"] ?? join(dataDir, "reminders.db");
const enrollments = new EnrollmentRepository(join(dataDir, "enrollments.db"));
const mail = new SqliteMailbox(join(dataDir, "mailbox.db"));

const scheduler = createScheduler({
  store: database.startsWith("postgres") ? postgres(database) : sqlite(database),
  handlers: {
    [REMINDER_HANDLER]: sendReminder({
      enrollments,
      mail,
      // The crash test's hook: stop dead after the mail went out, before punctual hears of it.
      ...(env["CRASH_AFTER_SEND"] === "1"
        ? {
            afterSend: async (run) => {
              console.log(JSON.stringify({ event: "sent_then_hanging", run: run.id }));
              await new Promise(() => undefined);
            },
          }
        : {}),
    }),
  },
  // Only for the crash test: how soon a silent replica's handler runs are taken back (default 10 s).
  ...(env["LIVENESS_SECONDS"] === undefined
    ? {}
    : { policy: { livenessTimeoutSeconds: Number(env["LIVENESS_SECONDS"]) } }),
});
await scheduler.start();

const retryInitial = env["RETRY_INITIAL"];
const school = new School(
  scheduler,
  enrollments,
  retryInitial === undefined ? {} : { retryInitial },
);
const server = schoolHttp(school);
server.listen(Number(env["PORT"] ?? 3100), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ event: "listening", url: `http://127.0.0.1:${port}` }));
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    server.close();
    void scheduler.stop().then(() => {
      enrollments.close();
      mail.close();
    });
  });
}
