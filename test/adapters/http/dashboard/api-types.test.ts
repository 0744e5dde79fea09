/**
 * The dashboard reads the API through the shapes in browser/api-types.d.ts; the server's response
 * schemas must fit them, so a field the dashboard reads cannot vanish or change type unnoticed. The
 * compiler checks these (`npm run lint:types`); at run time they are no-ops.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type * as Dashboard from "../../../../src/adapters/http/dashboard/browser/api-types.js";
import type { problemSchema } from "../../../../src/adapters/http/schemas.js";
import type {
  calendarListSchema,
  calendarPutResultSchema,
  calendarViewSchema,
  createdTaskSchema,
  explanationViewSchema as explanationSchema,
  previewSchema,
  runPageSchema,
  runViewSchema as runSchema,
  taskPageSchema,
  taskViewSchema as taskSchema,
} from "../../../../src/application/shapes/view-schemas.js";

describe("the dashboard's view of the API", () => {
  it("is what the server's response schemas promise", () => {
    expectTypeOf<z.output<typeof taskSchema>>().toExtend<Dashboard.Task>();
    expectTypeOf<z.output<typeof runSchema>>().toExtend<Dashboard.Run>();
    expectTypeOf<z.output<typeof taskPageSchema>>().toExtend<Dashboard.Page<Dashboard.Task>>();
    expectTypeOf<z.output<typeof runPageSchema>>().toExtend<Dashboard.Page<Dashboard.Run>>();
    expectTypeOf<z.output<typeof previewSchema>>().toExtend<Dashboard.Preview>();
    expectTypeOf<z.output<typeof explanationSchema>>().toExtend<Dashboard.Explanation>();
    expectTypeOf<z.output<typeof createdTaskSchema>>().toExtend<Dashboard.SavedTask>();
    expectTypeOf<z.output<typeof problemSchema>>().toExtend<Dashboard.Problem>();
    expectTypeOf<z.output<typeof calendarViewSchema>>().toExtend<Dashboard.Calendar>();
    expectTypeOf<z.output<typeof calendarPutResultSchema>>().toExtend<Dashboard.PutCalendar>();
    expectTypeOf<z.output<typeof calendarListSchema>>().toExtend<{
      items: readonly Dashboard.Calendar[];
    }>();
  });
});
