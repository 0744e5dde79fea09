/**
 * The API's answers as the dashboard reads them: the fields it uses, with the types docs/api.md gives
 * them. Types only (the page never loads this file); a test checks that the server's response schemas fit
 * these shapes, so a field the dashboard reads cannot vanish or change type unnoticed.
 */

/** A schedule as the API writes it; `scheduleInWords` reads any shape, so the dashboard keeps it open. */
export type Schedule = Readonly<Record<string, unknown>>;

export type Target =
  | { readonly kind: "handler"; readonly name: string; readonly input?: unknown }
  | {
      readonly kind: "webhook";
      readonly url: string;
      readonly method?: string | undefined;
      readonly input?: unknown;
    }
  | {
      readonly kind: "agent";
      readonly server: string;
      readonly assistant_id: string;
      readonly input?: unknown;
    };

export interface Task {
  readonly id: string;
  readonly key: string | null;
  readonly title: string;
  readonly description: string | null;
  readonly schedule: Schedule;
  readonly target: Target;
  readonly status: string;
  readonly next_run_at: string | null;
  readonly last_run_at: string | null;
  readonly last_error: string | null;
  readonly run_count: number;
  readonly version: number;
}

export interface Run {
  readonly id: string;
  readonly task_id: string;
  readonly status: string;
  readonly trigger: string;
  readonly reason: string | null;
  readonly attempt: number;
  readonly scheduled_for: string;
  /** When it fires: scheduled_for plus jitter, or where a moved occurrence moved to. */
  readonly fire_at: string;
  readonly launched_at: string | null;
  readonly finished_at: string | null;
  readonly lateness_ms: number | null;
  readonly late: boolean;
  /** A `missed` or `excluded` record's range: how many nominal times, and the last one. */
  readonly missed_count: number | null;
  readonly missed_until: string | null;
  readonly cancel_requested_at: string | null;
  readonly error: string | null;
  readonly result: unknown;
  /** A run from a moved occurrence: the nominal time it came from (its scheduled_for); else null. */
  readonly moved_from: string | null;
}

/** One replica of `GET /v1/replicas` (admin tokens). */
export interface Replica {
  readonly id: string;
  readonly started_at: string;
  readonly heartbeat_at: string;
  readonly live: boolean;
  readonly handler_names: readonly string[] | null;
}

export interface ReplicaList {
  readonly items: readonly Replica[];
  readonly liveness_timeout_ms: number;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly next_cursor: string | null;
}

/** What DST does to one fire: moved out of a gap, or the first or second pass of an overlap. */
export interface DstNote {
  readonly kind: "gap_shifted" | "overlap_first" | "overlap_second";
  readonly nominal_wall?: string | undefined;
  readonly collapsed?: number | undefined;
}

/** Which item of `exclude` excludes a fire: the item as written, and its calendar (or null). */
export interface ExclusionHit {
  readonly item: unknown;
  readonly calendar: string | null;
}

/** A fire DST (or the schedule's `exclude`) suppressed before the next one. */
export interface SuppressedFire {
  readonly kind: "overlap_repeat" | "gap_skipped" | "jump_skipped" | "excluded";
  readonly wall: string;
  readonly exclusion?: ExclusionHit | undefined;
}

export interface Occurrence {
  readonly at: string;
  readonly wall: string;
  readonly offset: string;
  readonly note: DstNote | null;
  /** The cron expression behind the fire (null for other schedules). */
  readonly rule: string | null;
  readonly suppressed_before: readonly SuppressedFire[];
}

export interface Preview {
  readonly occurrences: readonly Occurrence[];
}

export interface Explanation {
  readonly verdict: string;
  readonly message: string;
  readonly occurrence: { readonly local_wall: string; readonly offset: string } | null;
  readonly run: Run | null;
}

/** A named calendar: the days to skip schedules name in `exclude` as `{calendar: NAME}`. */
export interface Calendar {
  readonly name: string;
  readonly items: readonly unknown[];
  readonly version: number;
  readonly updated_at: string;
}

/** A calendar after a put: how many tasks took its items, and the tasks it holds still. */
export interface PutCalendar extends Calendar {
  readonly tasks_refreshed: number;
  readonly warnings: readonly string[];
}

/** A created or edited task, with the warnings the server had about it. */
export interface SavedTask {
  readonly task: Task;
  readonly warnings: readonly string[];
}

/** An RFC 9457 problem, as far as the dashboard shows it; any field may be missing from a non-API answer. */
export interface Problem {
  readonly title?: string;
  readonly detail?: string;
  readonly errors?: unknown;
  /** `calendar_in_use`: a task naming the calendar. */
  readonly task_id?: string | undefined;
}

/** One field's error in a `validation_failed` problem. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}
