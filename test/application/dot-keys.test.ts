/**
 * The keys `.` and `..` are refused (docs/semantics.md#task-keys): a URL-based client resolves them as
 * path segments, so `GET /v1/tasks/by-key/..` could never reach the task. Keys holding dots are fine.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

const task = (key: string) => ({
  key,
  title: "t",
  schedule: { type: "cron", cron: "0 9 * * *", timezone: "UTC" },
  target: { kind: "handler", name: "log" },
});

describe("task keys", () => {
  it("refuses . and .. and takes keys with dots", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
    for (const key of [".", ".."]) {
      await expect(scheduler.tasks.create(task(key))).rejects.toMatchObject({
        code: "validation_failed",
      });
    }
    for (const key of ["...", ".a", "a..b"]) {
      await expect(scheduler.tasks.create(task(key))).resolves.toMatchObject({ task: { key } });
    }
    await scheduler.stop();
  });
});
