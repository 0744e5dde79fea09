/**
 * Failures said out loud (docs/operations.md#logs): a failed run writes one warn line with the task, the
 * run, the reason and the error, and no credential a URL in the error carried.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "../../src/adapters/launchers/handler/handler-errors.js";
import { redactedError } from "../../src/application/events/run-failure-log.js";
import type { Logger } from "../../src/application/events/logger.js";
import { createTestScheduler } from "../../src/testing.js";

interface Line {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly msg: string | undefined;
}

function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, msg });
    };
  return {
    lines,
    logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") },
  };
}

describe("run failure log", () => {
  it("writes one warn line for a failed run, without the credentials its error named", async () => {
    const { logger, lines } = recorder();
    const scheduler = createTestScheduler({
      start: "2026-01-01T00:00:00Z",
      logger,
      handlers: {
        call: () => {
          throw new NonRetryableError("https://ann:hunter2@hooks.example/x?token=s3cret refused");
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "fails",
      schedule: { type: "once", run_at: "2026-01-01T00:01:00Z" },
      target: { kind: "handler", name: "call" },
    });
    await scheduler.advanceTo("2026-01-01T00:02:00Z");
    const [run] = await scheduler.ledger(task.id);
    await scheduler.stop();

    const warnings = lines.filter((l) => l.level === "warn");
    expect(warnings).toEqual([
      {
        level: "warn",
        msg: "run failed",
        fields: expect.objectContaining({
          taskId: task.id,
          runId: run?.id,
          status: "failed",
          reason: "non_retryable",
          target: "handler",
          error: "https://hooks.example/x refused",
        }) as unknown,
      },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/hunter2|s3cret/);
  });

  it("keeps a long error to 300 characters", () => {
    expect(redactedError("x".repeat(1000))).toHaveLength(300);
  });
});
