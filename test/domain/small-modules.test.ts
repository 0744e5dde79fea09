/**
 * The domain's small modules judged by what they promise, not by the lines they run (issue 36 item 7):
 * a signing secret's rotation and grace, the branded time values, a defective task's refusals, the
 * admission quota and a schedule's calendar snapshots.
 */
import { describe, expect, it } from "vitest";
import type { Admission, Decision } from "../../src/domain/admission.js";
import { withinAdmissionQuota } from "../../src/domain/admission-quota.js";
import type { Calendar } from "../../src/domain/calendar.js";
import {
  calendarStamps,
  changedStamps,
  expandedExclusionItems,
  namesCalendar,
  stampsByOwner,
  withCalendar,
} from "../../src/domain/calendar.js";
import { TaskDefectiveError, ValidationError } from "../../src/domain/errors.js";
import { ownerId } from "../../src/domain/ids.js";
import { parseCalendarItems, parseSchedule } from "../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../src/domain/task.js";
import { withScheduleFields } from "../../src/domain/task.js";
import type { TaskDefect } from "../../src/domain/task-defect.js";
import { isDefectiveField, missingRepairs, refuseDefective } from "../../src/domain/task-defect.js";
import {
  rotateTaskSecret,
  SECRET_GRACE_DEFAULT_MS,
  SECRET_GRACE_MAX_MS,
  validSecrets,
} from "../../src/domain/task-secret.js";
import {
  addMs,
  DAY_MS,
  durationMs,
  instant,
  maxInstant,
  minInstant,
} from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { at, buildTask, DAY, HOUR, T0 } from "./builders.js";

describe("rotateTaskSecret and validSecrets", () => {
  const task = buildTask({ webhookSecret: "old", retiringSecret: null });

  it("keeps the replaced secret valid, beside the new one, until its grace ends", () => {
    const {
      task: rotated,
      newRuns,
      runUpdates,
      cancelTargets,
    } = rotateTaskSecret(task, {
      secret: "new",
      now: T0,
      graceMs: HOUR,
    });
    expect([newRuns, runUpdates, cancelTargets]).toEqual([[], [], []]);
    expect(rotated.webhookSecret).toBe("new");
    expect(rotated.retiringSecret).toEqual({ secret: "old", until: T0 + HOUR });
    expect(rotated.updatedAt).toBe(T0);
    expect(validSecrets(rotated, T0)).toEqual(["new", "old"]);
    expect(validSecrets(rotated, (T0 + HOUR - 1) as Instant)).toEqual(["new", "old"]);
    // The grace ends at `until` exactly.
    expect(validSecrets(rotated, (T0 + HOUR) as Instant)).toEqual(["new"]);
  });

  it("retires the replaced secret at once with a grace of 0", () => {
    const rotated = rotateTaskSecret(task, { secret: "new", now: T0, graceMs: 0 }).task;
    expect(rotated.retiringSecret).toBeNull();
    expect(validSecrets(rotated, T0)).toEqual(["new"]);
  });

  it("drops a secret still retiring from an earlier rotation", () => {
    const first = rotateTaskSecret(task, { secret: "second", now: T0, graceMs: DAY }).task;
    const second = rotateTaskSecret(first, {
      secret: "third",
      now: (T0 + HOUR) as Instant,
      graceMs: SECRET_GRACE_DEFAULT_MS,
    }).task;
    expect(validSecrets(second, (T0 + 2 * HOUR) as Instant)).toEqual(["third", "second"]);
    expect(second.retiringSecret?.until).toBe(T0 + HOUR + DAY);
  });

  it("accepts a grace of exactly 7 days and refuses one outside 0..7 days", () => {
    const longest = rotateTaskSecret(task, {
      secret: "new",
      now: T0,
      graceMs: SECRET_GRACE_MAX_MS,
    }).task;
    expect(longest.retiringSecret?.until).toBe(T0 + 7 * DAY);
    for (const graceMs of [-1, SECRET_GRACE_MAX_MS + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let thrown: unknown;
      try {
        rotateTaskSecret(task, { secret: "new", now: T0, graceMs });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `grace ${graceMs}`).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).errors).toEqual([
        { field: "grace", message: "must be a duration from PT0S to P7D" },
      ]);
    }
  });

  it("treats a task stored without a retiring secret as having only its current one", () => {
    const stored = buildTask({ webhookSecret: "only" });
    delete (stored as { retiringSecret?: unknown }).retiringSecret;
    expect(validSecrets(stored, T0)).toEqual(["only"]);
  });
});

describe("time", () => {
  it("brands safe integers within ±8.64e15 ms as instants and refuses the rest", () => {
    expect(instant(0)).toBe(0);
    expect(instant(8.64e15)).toBe(8.64e15);
    expect(instant(-8.64e15)).toBe(-8.64e15);
    for (const bad of [8.64e15 + 1, -8.64e15 - 1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
      expect(() => instant(bad), String(bad)).toThrow(RangeError);
    }
    expect(() => instant(0.5)).toThrow("not an instant: 0.5");
  });

  it("brands non-negative integers as durations and refuses the rest", () => {
    expect(durationMs(0)).toBe(0);
    expect(durationMs(DAY_MS)).toBe(86_400_000);
    for (const bad of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => durationMs(bad), String(bad)).toThrow(RangeError);
    }
    expect(() => durationMs(-1)).toThrow("not a duration: -1");
  });

  it("adds milliseconds and picks the earlier or later instant", () => {
    const a = at("2026-03-02T09:00:00Z");
    const b = at("2026-03-02T10:00:00Z");
    expect(addMs(a, HOUR)).toBe(b);
    expect(addMs(b, -HOUR)).toBe(a);
    expect([minInstant(a, b), minInstant(b, a), minInstant(a, a)]).toEqual([a, a, a]);
    expect([maxInstant(a, b), maxInstant(b, a), maxInstant(b, b)]).toEqual([b, b, b]);
  });
});

describe("task defects", () => {
  const defect: TaskDefect = {
    fields: [
      { field: "schedule", message: "rules.0.hours: expected array" },
      { field: "target", message: "kind: unknown" },
    ],
    detectedAt: null,
  };

  it("names the broken fields only", () => {
    expect(isDefectiveField(defect, "schedule")).toBe(true);
    expect(isDefectiveField(defect, "target")).toBe(true);
    expect(isDefectiveField(defect, "options")).toBe(false);
    expect(isDefectiveField(null, "schedule")).toBe(false);
  });

  it("refuses a command on a defective task, naming its fields and the command", () => {
    expect(() => {
      refuseDefective({ defect: null }, "trigger");
    }).not.toThrow();
    let thrown: unknown;
    try {
      refuseDefective({ defect }, "trigger");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TaskDefectiveError);
    expect((thrown as TaskDefectiveError).code).toBe("task_defective");
    expect((thrown as TaskDefectiveError).fields).toEqual(["schedule", "target"]);
    expect((thrown as Error).message).toContain(
      "schedule, target does not parse: trigger needs it",
    );
  });

  it("asks an edit of a defective task to give each broken field anew", () => {
    expect(missingRepairs(null, new Set())).toEqual([]);
    expect(missingRepairs(defect, new Set(["schedule", "target"]))).toEqual([]);
    const missing = missingRepairs(defect, new Set(["schedule", "metadata"]));
    expect(missing).toEqual([
      {
        field: "target",
        message: "the stored value does not parse (kind: unknown): give it anew to repair the task",
      },
    ]);
  });
});

describe("withinAdmissionQuota", () => {
  const queue = (hour: number): Decision =>
    ({
      kind: "queue",
      trigger: "scheduled",
      scheduledFor: (T0 + hour * HOUR) as Instant,
      fireAt: (T0 + hour * HOUR) as Instant,
      notBefore: (T0 + hour * HOUR) as Instant,
      idempotencyKey: `k${hour}`,
    }) as Decision;
  const miss = { kind: "skip", scheduledFor: T0, fireAt: T0, reason: "overlap" } as Decision;
  const admission = (decisions: Decision[]): Admission =>
    ({ decisions, cancellations: [], task: {} }) as unknown as Admission;

  it("queues the first `allowance` runs in order and skips the rest with reason quota", () => {
    const given = admission([miss, queue(1), queue(2), queue(3)]);
    const { admission: out, queued } = withinAdmissionQuota(given, 1);
    expect(queued).toBe(1);
    expect(out.decisions).toEqual([
      miss,
      queue(1),
      { kind: "skip", scheduledFor: T0 + 2 * HOUR, fireAt: T0 + 2 * HOUR, reason: "quota" },
      { kind: "skip", scheduledFor: T0 + 3 * HOUR, fireAt: T0 + 3 * HOUR, reason: "quota" },
    ]);
    expect(given.decisions).toHaveLength(4);
    expect(given.decisions[2]).toEqual(queue(2));
  });

  it("returns the same admission when the allowance holds every queued run", () => {
    const given = admission([queue(1), miss, queue(2)]);
    const result = withinAdmissionQuota(given, 2);
    expect(result.queued).toBe(2);
    expect(result.admission).toBe(given);
  });

  it("skips every queued run with no allowance left", () => {
    const result = withinAdmissionQuota(admission([queue(1)]), 0);
    expect(result.queued).toBe(0);
    expect(
      result.admission.decisions.map((d) => [d.kind, "reason" in d ? d.reason : null]),
    ).toEqual([["skip", "quota"]]);
  });
});

describe("calendar snapshots", () => {
  const REFERENCE = at("2026-12-01T00:00:00Z");
  function calendar(name: string, version: number, ...items: unknown[]): Calendar {
    return {
      owner: ownerId("local"),
      name,
      items: parseCalendarItems(items, "items", 20_000).items,
      version,
      createdAt: REFERENCE,
      updatedAt: REFERENCE,
    };
  }
  function cron(held: Calendar[], ...extra: unknown[]) {
    return parseSchedule(
      {
        type: "cron",
        cron: "0 8 * * *",
        timezone: "UTC",
        exclude: [...extra, ...held.map((c) => ({ calendar: c.name }))],
      },
      { referenceAt: REFERENCE, calendars: new Map(held.map((c) => [c.name, c])) },
    );
  }
  const holidays1 = calendar("holidays", 1, "2026-12-24", "2026-12-25");
  const holidays2 = calendar("holidays", 2, "2026-12-31");
  const closures = calendar("closures", 4, "2026-12-10");

  it("lists the calendars a schedule names, with the version its snapshot holds", () => {
    expect(calendarStamps(cron([holidays1, closures], "2026-12-01"))).toEqual([
      { name: "holidays", version: 1 },
      { name: "closures", version: 4 },
    ]);
    expect(calendarStamps(cron([], "2026-12-01"))).toEqual([]);
    expect(namesCalendar(cron([holidays1]), "holidays")).toBe(true);
    expect(namesCalendar(cron([holidays1]), "closures")).toBe(false);
  });

  it("counts exclusion items with each calendar expanded", () => {
    expect(expandedExclusionItems(cron([holidays1, closures], "2026-12-01"))).toBe(4);
    expect(expandedExclusionItems(cron([]))).toBe(0);
  });

  it("groups distinct snapshots by owner", () => {
    const alice = ownerId("alice");
    const bob = ownerId("bob");
    const grouped = stampsByOwner([
      { owner: alice, schedule: cron([holidays1]) },
      { owner: alice, schedule: cron([holidays1, closures]) },
      { owner: alice, schedule: cron([holidays2]) },
      { owner: bob, schedule: cron([]) },
    ]);
    expect([...grouped.keys()]).toEqual([alice]);
    expect(grouped.get(alice)).toEqual([
      { name: "holidays", version: 1 },
      { name: "closures", version: 4 },
      { name: "holidays", version: 2 },
    ]);
  });

  it("names only the snapshots a write adds or changes", () => {
    expect(changedStamps(null, cron([holidays1]))).toEqual([{ name: "holidays", version: 1 }]);
    expect(changedStamps(cron([holidays1]), cron([holidays1, closures]))).toEqual([
      { name: "closures", version: 4 },
    ]);
    expect(changedStamps(cron([holidays1]), cron([holidays2]))).toEqual([
      { name: "holidays", version: 2 },
    ]);
    expect(changedStamps(cron([holidays1, closures]), cron([holidays1]))).toEqual([]);
  });

  it("replaces the snapshot of the named calendar only", () => {
    const spec = cron([holidays1, closures]);
    const refreshed = withCalendar(spec, holidays2);
    expect(calendarStamps(refreshed)).toEqual([
      { name: "holidays", version: 2 },
      { name: "closures", version: 4 },
    ]);
    expect(expandedExclusionItems(refreshed)).toBe(2);
    expect(withCalendar(cron([closures]), holidays2)).toEqual(cron([closures]));
    const once = parseSchedule(
      { type: "once", run_at: "2026-12-20T08:00:00Z" },
      { referenceAt: REFERENCE, calendars: new Map() },
    );
    expect(withCalendar(once, holidays2)).toBe(once);
    expect(calendarStamps(once)).toEqual([]);
  });
});

describe("withScheduleFields", () => {
  const task = buildTask({ lastError: "before", retiringSecret: { secret: "old", until: T0 } });
  const fields = {
    status: "completed",
    nextRunAt: null,
    decidedThrough: T0,
    admittedCount: 1,
  } as const;

  it("is the task with the admission's schedule fields, every other field as it was", () => {
    expect(withScheduleFields(task, fields)).toEqual({ ...task, ...fields });
    expect(withScheduleFields(task, { ...fields, lastError: "missed" }).lastError).toBe("missed");
    const plain = buildTask();
    expect("retiringSecret" in withScheduleFields(plain, fields)).toBe("retiringSecret" in plain);
  });

  it("writes `Task`'s fields in the order the stores read them, whatever order the task had (one shape in V8)", () => {
    const shuffled = Object.fromEntries(Object.entries(task).reverse()) as unknown as Task;
    expect(Object.keys(withScheduleFields(shuffled, fields))).toEqual(
      Object.keys(withScheduleFields(task, fields)),
    );
  });
});
