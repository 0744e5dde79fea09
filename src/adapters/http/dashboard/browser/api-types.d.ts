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
  readonly status: string;
  readonly trigger: string;
  readonly reason: string | null;
  readonly attempt: number;
  readonly scheduled_for: string;
  readonly launched_at: string | null;
  readonly finished_at: string | null;
  readonly lateness_ms: number | null;
  readonly late: boolean;
  readonly cancel_requested_at: string | null;
  readonly error: string | null;
  readonly result: unknown;
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

/** A fire DST (or the schedule's `exclude`) suppressed before the next one. */
export interface SuppressedFire {
  readonly kind: "overlap_repeat" | "gap_skipped" | "jump_skipped" | "excluded";
  readonly wall: string;
}

export interface Occurrence {
  readonly at: string;
  readonly wall: string;
  readonly offset: string;
  readonly note: DstNote | null;
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
}

/** One field's error in a `validation_failed` problem. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}
