/**
 * Moved occurrences through the service (issue 34, docs/schedules.md#moved-occurrences), on the
 * virtual clock and the memory store: a payroll task whose 25th falls on a calendar's holiday fires the
 * date before, as one run keeping the 25th as its `scheduled_for` (identity and idempotency key), with
 * the moved instant as `fire_at`; the preview and `explain` say where it came from.
 */
import { describe, expect, it } from "vitest";
import { createTask, handlerInput, harness, history, iso, ALICE } from "./harness.js";
import { instant } from "../../src/domain/time.js";

/** T0 is Monday 2030-01-07 09:00 UTC. 2030-01-25 is a Friday, 2030-02-25 a Monday. */
const at = (text: string) => instant(Date.parse(text));

describe("moved occurrences through the service", () => {
  it("fires an excluded 25th on the date before, as the one decision of that occurrence", async () => {
    const h = harness();
    await h.tasks.calendars.put(ALICE, "payday-off", { items: ["2030-01-25"] }, h.clock.now);
    const task = await createTask(
      h,
      handlerInput("0 9 25 * *", {
        schedule: {
          type: "cron",
          cron: "0 9 25 * *",
          timezone: "UTC",
          exclude: [{ calendar: "payday-off" }],
          on_excluded: "previous",
        },
      }),
    );
    expect(task.schedule).toMatchObject({ on_excluded: "previous" });
    expect(task.next_run_at).toBe("2030-01-24T09:00:00Z");

    const preview = await h.tasks.preview(ALICE, task.id, 2, h.clock.now);
    expect(preview.occurrences.map((o) => [o.at, o.moved_from?.at ?? null])).toEqual([
      ["2030-01-24T09:00:00Z", "2030-01-25T09:00:00Z"],
      ["2030-02-25T09:00:00Z", null],
    ]);
    expect(preview.occurrences[0]?.moved_from?.exclusion).toEqual({
      item: "2030-01-25",
      calendar: "payday-off",
    });

    await h.dispatch.admission.admitDue(h.clock.set(at("2030-01-24T09:00:01Z")), 10);
    const runs = await history(h, ALICE, task.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      status: "queued",
      scheduled_for: "2030-01-25T09:00:00Z",
      fire_at: "2030-01-24T09:00:00Z",
      not_before: "2030-01-24T09:00:00Z",
      idempotency_key: `punctual:${task.id}:scheduled:${at("2030-01-25T09:00:00Z")}`,
    });
    expect((await h.tasks.get(ALICE, task.id)).next_run_at).toBe("2030-02-25T09:00:00Z");

    // The 25th itself decides nothing more: its occurrence was decided the day before.
    await h.dispatch.admission.admitDue(h.clock.set(at("2030-01-25T09:00:01Z")), 10);
    expect(await history(h, ALICE, task.id)).toHaveLength(1);

    const explanation = await h.tasks.explain(
      ALICE,
      task.id,
      iso(at("2030-01-25T10:00:00Z")),
      h.clock.now,
    );
    expect(explanation.verdict).toBe("queued");
    expect(explanation.message).toContain("was moved to");
    expect(explanation.run?.scheduled_for).toBe("2030-01-25T09:00:00Z");
  });
});
