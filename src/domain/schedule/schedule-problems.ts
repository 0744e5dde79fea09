/**
 * The field errors `parseSchedule` collects (parse-schedule.ts) and the names it gives the fields, shared
 * with its reachability checks (schedule-reachable.ts).
 */
import type { FieldError } from "../errors.js";

export type Fields = Readonly<Record<string, unknown>>;

/** Field errors collected under one prefix (`schedule.cron`, ...). */
export interface Problems {
  readonly list: FieldError[];
  add(name: string, message: string): void;
}

export function problemsUnder(prefix: string): Problems {
  const list: FieldError[] = [];
  return {
    list,
    add: (name, message) =>
      list.push({ field: prefix === "" ? name : `${prefix}.${name}`, message }),
  };
}

export function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The field naming rule `index` of a schedule: `cron`, or `cron.1` when `cron` is a list. */
export function ruleField(listed: boolean, index: number): string {
  return listed ? `cron.${index}` : "cron";
}
