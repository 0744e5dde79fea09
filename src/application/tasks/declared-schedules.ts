/**
 * Declared schedules (docs/library.md#declared-schedules): a set of keyed task definitions kept in
 * one group, synced by upsert. Every definition is checked first (a dry run of each upsert), so a bad
 * one writes nothing; then each is upserted (identical ones write nothing, so replicas starting at once
 * do the work once), and the group's tasks no longer declared are left alone, paused or deleted as
 * `prune` says. Tasks of another group, tasks in no group, and tasks of another owner than the one the
 * upserts go to (an admin token sees every owner's) are never touched. The same plan serves
 * `createScheduler({ schedules })` (over the service) and `punctual apply` (over the HTTP client).
 */
import { ValidationError } from "../../domain/errors.js";
import { DEFAULT_SCHEDULES_GROUP, TASK_KEY_PATTERN } from "../../domain/task.js";
import type { TaskView } from "../shapes/view-mappers.js";

/** What becomes of a group's task that is no longer declared. */
export const PRUNE_MODES = ["none", "pause", "delete"] as const;
export type PruneMode = (typeof PRUNE_MODES)[number];

/** A declaration: the definitions (each with its `key`), their group, and what prune does. */
export interface ScheduleDeclaration {
  readonly schedules: readonly unknown[];
  /** @default "default" */
  readonly group?: string | undefined;
  /** @default "none" (left alone, and said so in the plan and the log) */
  readonly prune?: PruneMode | undefined;
  /**
   * The owner this declaration is for (`punctual apply --owner`): refused unless the upserts go to it,
   * and the only owner whose tasks are pruned. Needed to prune when nothing is declared and the surface
   * cannot say whose it is.
   */
  readonly owner?: string | undefined;
}

/** One line of the plan: what the sync did (or, in a dry run, would do) to one key. */
export interface DeclaredScheduleStep {
  readonly key: string;
  readonly action: "create" | "update" | "unchanged" | "prune";
  /** The task's id (absent for a create in a dry run). */
  readonly task_id: string | null;
  /** For `update`: the fields changed. */
  readonly changed: readonly string[];
  /**
   * For `prune`: `left` (no prune mode, or already paused or ended), `paused` or `deleted` (a task
   * whose run is launching or running is deleted at once and its run finishes: the task's rows go
   * when it has ended, docs/library.md#declared-schedules).
   */
  readonly prune?: "left" | "paused" | "deleted";
}

export interface DeclaredSchedulesPlan {
  readonly group: string;
  /** The owner the plan's upserts and prunes are for (null: nothing declared, nothing pruned). */
  readonly owner: string | null;
  readonly dry_run: boolean;
  readonly steps: readonly DeclaredScheduleStep[];
}

/** What a sync needs of a surface (the service for the library, the HTTP client for the CLI). */
export interface DeclaredSchedulesPort {
  /** The owner the surface writes as, when it knows it (the library's actor); null over HTTP. */
  readonly owner: string | null;
  upsert(
    input: unknown,
    dryRun: boolean,
  ): Promise<{ task: TaskView; created: boolean; changed: readonly string[] }>;
  /** Every task the caller sees in `group` (every owner's for an admin). */
  listGroup(group: string): Promise<readonly TaskView[]>;
  pause(id: string): Promise<unknown>;
  /** Deletes the task, letting a launching or running run finish (`after_run`). */
  delete(id: string): Promise<unknown>;
}

function keyOf(definition: unknown): unknown {
  return typeof definition === "object" && definition !== null
    ? Reflect.get(definition, "key")
    : undefined;
}

/** The declaration's keys. @throws validation_failed naming each definition without a key, or repeated */
function declaredKeys(schedules: readonly unknown[]): string[] {
  const seen = new Set<string>();
  const errors: { field: string; message: string }[] = [];
  schedules.forEach((definition, i) => {
    const key = keyOf(definition);
    if (typeof key !== "string" || !TASK_KEY_PATTERN.test(key)) {
      errors.push({ field: `schedules.${i}.key`, message: "a declared schedule needs a key" });
    } else if (seen.has(key)) {
      errors.push({ field: `schedules.${i}.key`, message: `the key "${key}" is declared twice` });
    }
    if (typeof key === "string") seen.add(key);
  });
  if (errors.length > 0) throw new ValidationError(errors);
  return [...seen];
}

/** Prunes one task no longer declared, as `mode` says. */
async function pruneOne(
  port: DeclaredSchedulesPort,
  task: TaskView,
  mode: PruneMode,
  dryRun: boolean,
): Promise<NonNullable<DeclaredScheduleStep["prune"]>> {
  const pausable = task.status === "enabled";
  if (mode === "none" || (mode === "pause" && !pausable)) return "left";
  if (dryRun) return mode === "pause" ? "paused" : "deleted";
  if (mode === "pause") {
    await port.pause(task.id);
    return "paused";
  }
  // docs/semantics.md#task-operations: a run launching or running is not stopped by a prune; the
  // task admits nothing from now and is gone once that run has ended.
  await port.delete(task.id);
  return "deleted";
}

/**
 * Syncs `declaration` through `port`: checks every definition, upserts each into the group, then
 * prunes. With `dryRun`, writes nothing and answers the plan.
 * @throws validation_failed (naming `schedules.N...`) before any write when a definition is bad
 */
export async function syncDeclaredSchedules(
  port: DeclaredSchedulesPort,
  declaration: ScheduleDeclaration,
  options: { readonly dryRun?: boolean } = {},
): Promise<DeclaredSchedulesPlan> {
  const dryRun = options.dryRun ?? false;
  const group = declaration.group ?? DEFAULT_SCHEDULES_GROUP;
  if (!TASK_KEY_PATTERN.test(group)) {
    throw ValidationError.of(
      "group",
      "a group is 1 to 200 letters, digits, '.', '_', ':' or '-', not '.' or '..'",
    );
  }
  const keys = declaredKeys(declaration.schedules);
  const inputs = declaration.schedules.map((definition) => ({
    ...(definition as Record<string, unknown>),
    group,
  }));
  // Every definition is checked before the first write.
  const planned = await Promise.all(
    inputs.map((input, i) =>
      port.upsert(input, true).catch((error: unknown) => {
        throw prefixed(error, `schedules.${i}`);
      }),
    ),
  );
  const owner = ownerOf(port, declaration, planned);
  const answers = dryRun ? planned : [];
  if (!dryRun) for (const input of inputs) answers.push(await port.upsert(input, false));
  const steps: DeclaredScheduleStep[] = answers.map((answer, i) => ({
    key: keys[i] ?? "",
    action: answer.created ? "create" : answer.changed.length > 0 ? "update" : "unchanged",
    task_id: answer.created && dryRun ? null : answer.task.id,
    changed: answer.changed,
  }));
  const declared = new Set(keys);
  const mode = declaration.prune ?? "none";
  const listed = await port.listGroup(group);
  if (owner === null && mode !== "none") {
    const owners = [...new Set(listed.map((task) => task.owner))];
    if (owners.length > 0) {
      throw ValidationError.of(
        "owner",
        `nothing is declared, so the owner to prune is not known (the group holds tasks of ` +
          `${owners.map((o) => `"${o}"`).join(", ")}): name it (punctual apply --owner)`,
      );
    }
  }
  for (const task of listed) {
    // docs/library.md#declared-schedules: a prune never leaves the owner the upserts go to.
    if (task.owner !== owner) continue;
    if (task.key === null || declared.has(task.key)) continue;
    const prune = await pruneOne(port, task, mode, dryRun);
    steps.push({ key: task.key, action: "prune", task_id: task.id, changed: [], prune });
  }
  return { group, owner, dry_run: dryRun, steps };
}

/**
 * The owner the upserts go to: the surface's, else the one every checked upsert answered with, else
 * the declaration's. @throws validation_failed (`owner`) when the declaration names another owner
 */
function ownerOf(
  port: DeclaredSchedulesPort,
  declaration: ScheduleDeclaration,
  planned: readonly { readonly task: TaskView }[],
): string | null {
  const writes = port.owner ?? planned[0]?.task.owner ?? null;
  const named = declaration.owner;
  if (named !== undefined && writes !== null && named !== writes) {
    throw ValidationError.of(
      "owner",
      `the upserts go to owner "${writes}" (the caller's own), not "${named}": apply with a token of "${named}"`,
    );
  }
  return writes ?? named ?? null;
}

/** A validation error of one definition, its fields named under `prefix` (`schedules.2.title`). */
function prefixed(error: unknown, prefix: string): unknown {
  if (!(error instanceof ValidationError)) return error;
  return new ValidationError(
    error.errors.map((e) => ({ field: `${prefix}.${e.field}`, message: e.message })),
    { cause: error },
  );
}

/** The plan in words, one line per key (`punctual apply` prints it; the library logs it). */
export function planLines(plan: DeclaredSchedulesPlan): string[] {
  return plan.steps.map((step) => {
    const detail =
      step.action === "update"
        ? ` (${step.changed.join(", ")})`
        : step.action === "prune"
          ? ` (${step.prune ?? "left"})`
          : "";
    return `${step.action.padEnd(9)} ${step.key}${detail}`;
  });
}
