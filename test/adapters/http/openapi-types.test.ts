/**
 * The OpenAPI document is precise enough to generate a typed client from: openapi-typescript turns the
 * document a real server serves into TypeScript, and a small client program is type-checked against it
 * with the compiler API. The program narrows schedules and targets on their discriminant and expects
 * errors for wrong shapes, so it fails to compile against a document where `schedule` is an untyped
 * object (as it was): the second test proves that.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let served: Record<string, unknown>;
const dir = mkdtempSync(join(tmpdir(), "punctual-openapi-types-"));

beforeAll(async () => {
  t = await startTestServer();
  served = (await (await fetch(`${t.url}/openapi.json`)).json()) as Record<string, unknown>;
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A client program written against the generated `paths` and `components`. */
const PROGRAM = `
import type { components, paths } from "./api.js";

type Schemas = components["schemas"];
type CreateBody = paths["/v1/tasks"]["post"]["requestBody"]["content"]["application/json"];
type Created = paths["/v1/tasks"]["post"]["responses"][201]["content"]["application/json"];
type Page = paths["/v1/tasks"]["get"]["responses"][200]["content"]["application/json"];

export function scheduleText(schedule: Schemas["Schedule"]): string {
  switch (schedule.type) {
    case "cron":
      return schedule.cron + " in " + schedule.timezone;
    case "once":
      return "once at " + schedule.run_at;
    case "interval":
      return "every " + schedule.every + (schedule.start_at === undefined ? "" : " from " + schedule.start_at);
    case "rrule":
      return "rrule " + schedule.rrule;
  }
}

export function targetText(target: Schemas["Target"]): string {
  switch (target.kind) {
    case "agent":
      return target.server + "/" + target.assistant_id;
    case "webhook":
      return target.method + " " + target.url;
    case "handler":
      return target.name;
  }
}

export const body: CreateBody = {
  title: "weekday standup",
  schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin", jitter: "PT30S" },
  target: { kind: "handler", name: "log", input: { to: "team" } },
};

export const interval: Schemas["ScheduleInput"] = { type: "interval", every: 300, max_runs: 3 };

// @ts-expect-error a cron schedule needs its expression
export const missingCron: Schemas["ScheduleInput"] = { type: "cron" };

// @ts-expect-error a once schedule has no "every"
export const mixed: Schemas["ScheduleInput"] = { type: "once", run_at: "2030-01-01T00:00:00Z", every: "PT1M" };

// @ts-expect-error there is no "weekly" schedule
export const weekly: Schemas["ScheduleInput"] = { type: "weekly" };

export const businessDays: Schemas["ScheduleInput"] = {
  type: "cron",
  cron: ["0 9 * * 1-5", "0 10 * * sat"],
  timezone: "Europe/Berlin",
  exclude: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { days: "L * *" }, { calendar: "holidays" }],
};

export const hourly: Schemas["ScheduleInput"] = { type: "interval", every: "PT1H", timezone: "Europe/Berlin", exclude: [{ calendar: "holidays" }] };

// @ts-expect-error a once schedule excludes nothing
export const onceExcluded: Schemas["ScheduleInput"] = { type: "once", run_at: "2030-01-01T00:00:00Z", exclude: ["2030-01-01"] };

type CalendarPut = paths["/v1/calendars/{name}"]["put"]["requestBody"]["content"]["application/json"];
type CalendarRead = paths["/v1/calendars/{name}"]["get"]["responses"][200]["content"]["application/json"];

export const weekends: CalendarPut = { items: ["2026-12-25", { days: "* * sat,sun" }] };

// @ts-expect-error a calendar holds no other calendar
export const nested: CalendarPut = { items: [{ calendar: "holidays" }] };

export function calendarSize(calendar: CalendarRead): number {
  return calendar.items.length + calendar.version;
}

export function firstSchedule(created: Created, page: Page): [string, string | undefined] {
  const first = page.items[0];
  return [scheduleText(created.task.schedule), first === undefined ? undefined : scheduleText(first.schedule)];
}
`;

/** Generates the types of `doc`, writes them beside the program and type-checks both. */
async function diagnosticsAgainst(doc: Record<string, unknown>, name: string): Promise<string[]> {
  const at = mkdtempSync(join(dir, `${name}-`));
  writeFileSync(join(at, "api.ts"), astToString(await openapiTS(doc as never)));
  writeFileSync(join(at, "program.ts"), PROGRAM);
  const program = ts.createProgram([join(at, "program.ts")], {
    strict: true,
    noEmit: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitReturns: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

describe("the OpenAPI document's generated types", () => {
  it("type-check a client program that narrows schedules and targets", async () => {
    expect(await diagnosticsAgainst(served, "served")).toEqual([]);
  }, 60_000);

  it("would not, if schedule were an untyped object", async () => {
    const untyped = { type: "object", propertyNames: { type: "string" }, additionalProperties: {} };
    const doc = structuredClone(served) as { components: { schemas: Record<string, unknown> } };
    doc.components.schemas["Schedule"] = untyped;
    doc.components.schemas["ScheduleInput"] = untyped;
    const diagnostics = await diagnosticsAgainst(doc, "untyped");
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.join("\n")).toMatch(/Unused '@ts-expect-error' directive/);
  }, 60_000);

  it("come from discriminated unions that map each value to its component", () => {
    const schemas = (
      served as { components: { schemas: Record<string, { discriminator?: unknown }> } }
    ).components.schemas;
    expect(schemas["Schedule"]?.discriminator).toEqual({
      propertyName: "type",
      mapping: {
        cron: "#/components/schemas/CronSchedule",
        once: "#/components/schemas/OnceSchedule",
        interval: "#/components/schemas/IntervalSchedule",
        rrule: "#/components/schemas/RRuleSchedule",
      },
    });
    expect(schemas["ScheduleInput"]?.discriminator).toMatchObject({ propertyName: "type" });
    expect(schemas["TargetInput"]?.discriminator).toMatchObject({ propertyName: "kind" });
  });

  it("have a stable, meaningful name for every component", () => {
    const names = Object.keys((served as { components: { schemas: object } }).components.schemas);
    expect(names).toEqual(expect.arrayContaining(["Task", "Schedule", "ScheduleInput", "Run"]));
    for (const name of names) expect(name).toMatch(/^[A-Z][A-Za-z]+$/);
  });
});
