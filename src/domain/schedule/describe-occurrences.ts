/**
 * `describeOccurrences`: a schedule's next fires with their local wall time and what DST did to them, and
 * the fires DST suppressed on the way (docs/schedules.md#cron: "so a user can see what DST will do").
 */
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { formatOffset, formatWall } from "./civil-time.js";
import { matchingWalls } from "./cron-matcher.js";
import type { CronExpression } from "./cron-expression.js";
import type { CronFire } from "./cron-next.js";
import { nextAfter, nextCronFireOf, nextRRuleInstanceOf } from "./next-after.js";
import type { ExclusionHit } from "./exclusions.js";
import { movedFireOf } from "./moved-occurrence.js";
import { excludedAt, exclusionZoneOf, nextFireOccurrenceAfter } from "./next-fire.js";
import type {
  CronSchedule,
  IntervalSchedule,
  OnceSchedule,
  RRuleSchedule,
  ScheduleSpec,
} from "./schedule-types.js";
import { MAX_DST_SHIFT_MS, isDstGap, isDstOverlap, resolveWall, wallOf } from "./wall-clock.js";
import { offsetAt, transitionsBetween } from "./zone-offsets.js";

/** What DST did to one fire. */
export type DstNote =
  /**
   * The wall time did not exist (a gap); the fire moved to the transition instant (cron, once), or, for
   * a recurrence, to the wall time read with the offset before the gap (RFC 5545 3.3.5).
   */
  | {
      readonly kind: "gap_shifted";
      /** The first nominal wall time inside the gap (`YYYY-MM-DDTHH:MM:SS`). */
      readonly nominalWall: string;
      /** How many further matches in the same gap collapsed into this fire. */
      readonly collapsed: number;
    }
  /** The wall time happens twice (an overlap); this is the first pass. */
  | { readonly kind: "overlap_first" }
  /** The wall time happens twice; this is the second pass (wildcard jobs, or jumps over 3 hours). */
  | { readonly kind: "overlap_second" };

/** Kinds of fires that DST (or an exclusion) removed. */
export const SUPPRESSED_KINDS = [
  "overlap_repeat",
  "gap_skipped",
  "jump_skipped",
  "excluded",
] as const;
export type SuppressedKind = (typeof SUPPRESSED_KINDS)[number];

/**
 * A match that does not fire: `overlap_repeat` (a fixed-time job's repeated wall time, second pass),
 * `gap_skipped` (a wildcard job's wall time that does not exist), `jump_skipped` (a fixed-time job's
 * wall time inside a jump of more than 3 hours: not caught up), `excluded` (a nominal time on a date
 * the schedule's `exclude` names).
 */
export interface SuppressedFire {
  readonly kind: SuppressedKind;
  /** The second-pass instant for `overlap_repeat`, the nominal time for `excluded`, else the transition. */
  readonly at: Instant;
  /** The local wall time that matched. */
  readonly wall: string;
  /** For `excluded`: the item that excludes it. */
  readonly exclusion?: ExclusionHit;
}

/** One upcoming fire. */
export interface DescribedOccurrence {
  readonly at: Instant;
  /** Local wall time in the schedule's zone (`YYYY-MM-DDTHH:MM:SS`; an interval's `timezone`, else UTC). */
  readonly wall: string;
  /** The zone's UTC offset at `at`, e.g. `-04:00`. */
  readonly offset: string;
  readonly note: DstNote | null;
  /** Fires suppressed by DST after the previous listed fire (or `after`) and up to this one. */
  readonly suppressedBefore: readonly SuppressedFire[];
  /** The cron expression that produced the fire (the first in the order written); null for others. */
  readonly rule: string | null;
  /** Set only in the `nominal` listing: the item that excludes this nominal time. */
  readonly exclusion: ExclusionHit | null;
  /**
   * For an occurrence moved off an excluded date (docs/schedules.md#moved-occurrences): its nominal
   * time, local wall time and the item that excludes it; `at` is the moved instant.
   */
  readonly movedFrom?: SuppressedFire;
}

/** At most this many suppressed fires are listed per call (a per-second job skips 3600 in a gap). */
export const MAX_SUPPRESSED_LISTED = 100;

function overlapNote(zone: string, at: number, wall: number): DstNote | null {
  const { instants } = resolveWall(zone, wall);
  if (instants.length < 2) return null;
  return instants[0] === at ? { kind: "overlap_first" } : { kind: "overlap_second" };
}

function gapNote(spec: CronSchedule, fire: CronFire): DstNote | null {
  if (fire.gapWall === null) return null;
  // The fire sits at the transition, so its wall time is the end of the gap; every fixed-time rule's
  // matches inside the gap collapse into it.
  const gapStart = fire.at + offsetAt(spec.timezone, fire.at - 1);
  const inGap = new Set<number>([fire.gapWall]);
  for (const rule of spec.rules) {
    if (!rule.fixedTime) continue;
    for (const wall of matchingWalls(rule, gapStart, fire.wall, MAX_DST_SHIFT_MS / 1000)) {
      inGap.add(wall);
    }
  }
  return {
    kind: "gap_shifted",
    nominalWall: formatWall(Math.min(...inGap)),
    collapsed: inGap.size - 1,
  };
}

/** One rule's matches DST suppressed with an instant in `(low, high]`, at most `room` of them. */
function suppressedOfRule(
  rule: CronExpression,
  zone: string,
  window: { readonly low: number; readonly high: number; readonly room: number },
): SuppressedFire[] {
  const { low, high } = window;
  const found: SuppressedFire[] = [];
  const fixed = rule.fixedTime;
  for (const t of transitionsBetween(zone, low - MAX_DST_SHIFT_MS, high)) {
    const room = window.room - found.length;
    if (t.offsetAfter > t.offsetBefore) {
      if (t.at <= low || t.at > high || (fixed && isDstGap(t))) continue;
      const kind = fixed ? "jump_skipped" : "gap_skipped";
      for (const wall of matchingWalls(rule, t.at + t.offsetBefore, t.at + t.offsetAfter, room)) {
        found.push({ kind, at: instant(t.at), wall: formatWall(wall) });
      }
    } else if (fixed && isDstOverlap(t)) {
      for (const wall of matchingWalls(rule, t.at + t.offsetAfter, t.at + t.offsetBefore, room)) {
        const at = wall - t.offsetAfter;
        if (at > low && at <= high)
          found.push({ kind: "overlap_repeat", at: instant(at), wall: formatWall(wall) });
      }
    }
  }
  return found;
}

/**
 * Matches DST suppressed with an instant in `(from, to]` (a cron schedule's, inside its bounds), rule by
 * rule; a repeated wall time that another rule fires on both passes is a fire, not suppressed.
 */
function suppressedBetween(spec: CronSchedule, from: number, to: number): SuppressedFire[] {
  const low = spec.startAt === null ? from : Math.max(from, spec.startAt - 1);
  const high = spec.endAt === null ? to : Math.min(to, spec.endAt);
  const seen = new Map<string, SuppressedFire>();
  for (const rule of spec.rules) {
    const room = MAX_SUPPRESSED_LISTED - seen.size;
    for (const fire of suppressedOfRule(rule, spec.timezone, { low, high, room })) {
      seen.set(`${fire.kind}|${fire.at}|${fire.wall}`, fire);
    }
  }
  const found = [...seen.values()];
  const fired = (at: number): boolean =>
    spec.rules.length > 1 && nextCronFireOf(spec, at - 1)?.at === at;
  return found
    .filter((fire) => fire.kind !== "overlap_repeat" || !fired(fire.at))
    .sort((a, b) => a.at - b.at);
}

function describeOnce(spec: OnceSchedule, after: Instant): DescribedOccurrence[] {
  if (spec.runAt <= after) return [];
  const wall = wallOf(spec.timezone, spec.runAt);
  const local = spec.localRunAt;
  const note: DstNote | null =
    local !== null && local !== formatWall(wall)
      ? { kind: "gap_shifted", nominalWall: local, collapsed: 0 }
      : overlapNote(spec.timezone, spec.runAt, wall);
  return [
    described(spec.timezone, {
      at: spec.runAt,
      note,
      suppressed: [],
      rule: null,
      exclusion: null,
    }),
  ];
}

/** The text of the rule at `index` of `spec.rules`: never missing, so its `?? null` is not measured. */
function ruleText(spec: CronSchedule, index: number): string | null {
  /* v8 ignore next */
  return spec.rules[index]?.text ?? null;
}

/** A moved occurrence as listed: at its moved instant, saying where it came from. */
function movedOccurrence(
  spec: ScheduleSpec,
  zone: string,
  nominal: Instant,
  moved: Instant,
  suppressed: readonly SuppressedFire[],
): DescribedOccurrence {
  const exclusion = excludedAt(spec, nominal);
  const from: SuppressedFire = {
    kind: "excluded",
    at: nominal,
    wall: formatWall(wallOf(zone, nominal)),
    // A moved occurrence is on an excluded date, so `exclusion` is never null here (not measured).
    /* v8 ignore next */
    ...(exclusion === null ? {} : { exclusion }),
  };
  const fire = described(zone, { at: moved, note: null, suppressed, rule: null, exclusion: null });
  return { ...fire, movedFrom: from };
}

interface Described {
  readonly at: Instant;
  readonly note: DstNote | null;
  readonly suppressed: readonly SuppressedFire[];
  readonly rule: string | null;
  readonly exclusion: ExclusionHit | null;
}

function described(zone: string, fields: Described): DescribedOccurrence {
  const wall = wallOf(zone, fields.at);
  return {
    at: fields.at,
    wall: formatWall(wall),
    offset: formatOffset(wall - fields.at),
    note: fields.note,
    suppressedBefore: fields.suppressed,
    rule: fields.rule,
    exclusion: fields.exclusion,
  };
}

/** A recurrence's instance whose wall time did not exist (RFC 5545 3.3.5: read with the offset before the gap). */
function rruleNote(zone: string, at: number, wall: number | null): DstNote | null {
  if (wall === null) return null;
  if (wallOf(zone, at) !== wall) {
    return { kind: "gap_shifted", nominalWall: formatWall(wall), collapsed: 0 };
  }
  return overlapNote(zone, at, wall);
}

/** The next nominal time after `previous`, with the cron fire's DST details when it is one. */
function nextNominal(
  spec: CronSchedule | IntervalSchedule | RRuleSchedule,
  previous: Instant,
): { at: Instant; fire: CronFire | null; note?: DstNote | null } | null {
  if (spec.type === "rrule") {
    const found = nextRRuleInstanceOf(spec, previous);
    return found === null
      ? null
      : { at: found.at, fire: null, note: rruleNote(spec.timezone, found.at, found.wall) };
  }
  if (spec.type === "interval") {
    const at = nextAfter(spec, previous);
    return at === null ? null : { at, fire: null };
  }
  const fire = nextCronFireOf(spec, previous);
  return fire === null ? null : { at: instant(fire.at), fire };
}

export interface DescribeOptions {
  /**
   * List every nominal time, excluded ones included (each with its `exclusion`), as `explain` reads
   * them. @default false: list fires only, and the excluded nominal times as suppressed.
   */
  readonly nominal?: boolean;
}

/**
 * The next `count` fires strictly after `after`, each with its local wall time, a DST note, the rule
 * behind it, and the fires DST or an exclusion suppressed since the previous one. Fewer when the
 * schedule ends.
 */
export function describeOccurrences(
  spec: ScheduleSpec,
  after: Instant,
  count: number,
  options: DescribeOptions = {},
): DescribedOccurrence[] {
  if (spec.type === "once") return describeOnce(spec, after);
  const zone = exclusionZoneOf(spec);
  const list: DescribedOccurrence[] = [];
  let previous: Instant = after;
  let lastListed: Instant = after;
  let listedSuppressed = 0;
  let excluded: SuppressedFire[] = [];
  const moves = options.nominal !== true && spec.onExcluded !== undefined;
  // A move to the next date can carry an occurrence at or before `after` past it.
  const carried = moves ? nextFireOccurrenceAfter(spec, after) : null;
  if (carried !== null && carried.moved && carried.scheduledFor <= after) {
    list.push(movedOccurrence(spec, zone, carried.scheduledFor, carried.fireAt, []));
    lastListed = carried.fireAt;
  }
  while (list.length < count) {
    const next = nextNominal(spec, previous);
    if (next === null) break;
    const { at, fire } = next;
    const exclusion = excludedAt(spec, at);
    const moved = moves && exclusion !== null ? movedFireOf(spec, at) : null;
    if (moved !== null) {
      // Listed at its moved instant, once it lies after `after` (a move to the previous date may not).
      if (moved > after) {
        list.push(movedOccurrence(spec, zone, at, moved, excluded));
        excluded = [];
        lastListed = moved;
      }
      previous = at;
      continue;
    }
    if (exclusion !== null && options.nominal !== true) {
      if (listedSuppressed + excluded.length < MAX_SUPPRESSED_LISTED) {
        excluded.push({ kind: "excluded", at, wall: formatWall(wallOf(zone, at)), exclusion });
        previous = at;
      } else {
        // Enough listed: jump over the rest of the excluded stretch in one search.
        const jump = nextFireOccurrenceAfter(spec, at);
        if (jump === null) break;
        previous = instant(jump.scheduledFor - 1);
      }
      continue;
    }
    const room = MAX_SUPPRESSED_LISTED - listedSuppressed;
    const byDst =
      spec.type === "cron" && room > 0
        ? suppressedBetween(spec, lastListed, at).filter((s) => excludedAt(spec, s.at) === null)
        : [];
    const suppressed = [...excluded, ...byDst].sort((a, b) => a.at - b.at).slice(0, room);
    listedSuppressed += suppressed.length;
    excluded = [];
    const note =
      spec.type === "cron" && fire !== null
        ? (gapNote(spec, fire) ?? overlapNote(zone, at, fire.wall))
        : (next.note ?? null);
    const rule = spec.type === "cron" && fire !== null ? ruleText(spec, fire.rule) : null;
    list.push(described(zone, { at, note, suppressed, rule, exclusion }));
    previous = at;
    lastListed = at;
  }
  return list;
}
