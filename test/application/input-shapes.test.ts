/**
 * The zod shapes and the hand-written public types are one type: the schedule a user writes for
 * `nextOccurrences` (domain `ScheduleInput`) is what the task inputs, the HTTP API and
 * `punctual/client` take, and the service's `CreatedTask` is the documented answer of a create.
 * Checked by the compiler (`npm run lint` type-checks the tests).
 */
import type { z } from "zod";
import { describe, expectTypeOf, it } from "vitest";
import type { scheduleShapeSchema } from "../../src/application/shapes/schedule-input.js";
import type { ScheduleInput } from "../../src/domain/schedule/schedule-input.js";
import type { ScheduleView } from "../../src/application/shapes/view-schemas.js";
import type { scheduleToInput } from "../../src/domain/schedule/schedule-spec.js";
import type { CreatedTask } from "../../src/application/tasks/task-service.js";
import type { createdTaskSchema } from "../../src/application/shapes/view-schemas.js";

type Shape = z.input<typeof scheduleShapeSchema>;

describe("the schedule's input shape", () => {
  it("is the domain's ScheduleInput, both ways", () => {
    expectTypeOf<Shape>().toExtend<ScheduleInput>();
    expectTypeOf<ScheduleInput>().toExtend<Shape>();
  });

  it("is what a task's schedule reads back as, normalised", () => {
    expectTypeOf<ReturnType<typeof scheduleToInput>>().toExtend<ScheduleView>();
    expectTypeOf<ScheduleView>().toExtend<Shape>();
  });
});

describe("the answer of a create", () => {
  it("is the service's CreatedTask", () => {
    expectTypeOf<z.output<typeof createdTaskSchema>>().toExtend<CreatedTask>();
    expectTypeOf<CreatedTask["task"]>().toEqualTypeOf<z.output<typeof createdTaskSchema>["task"]>();
  });
});
