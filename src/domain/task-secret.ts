/**
 * A task's signing secret and its rotation (docs/security.md#rotating-a-tasks-signing-secret): a new secret
 * replaces the current one, which keeps signing (beside it) and opening callbacks until its grace ends.
 */
import { ValidationError } from "./errors.js";
import type { Task } from "./task.js";
import type { CommandOutcome } from "./task-commands.js";
import { DAY_MS } from "./time.js";
import type { Instant } from "./time.js";

/** How long the replaced secret stays valid when the rotation names no grace. */
export const SECRET_GRACE_DEFAULT_MS = DAY_MS;
/** The longest grace a rotation may ask for. */
export const SECRET_GRACE_MAX_MS = 7 * DAY_MS;

/**
 * The rotation: `secret` becomes the task's, the current one retires until `now + graceMs` (a grace of
 * 0 retires it at once). A secret retiring from an earlier rotation is dropped.
 * @throws validation_failed naming `grace` outside 0..7 days
 */
export function rotateTaskSecret(
  task: Task,
  ctx: { readonly secret: string; readonly now: Instant; readonly graceMs: number },
): CommandOutcome {
  if (!Number.isFinite(ctx.graceMs) || ctx.graceMs < 0 || ctx.graceMs > SECRET_GRACE_MAX_MS) {
    throw ValidationError.of("grace", "must be a duration from PT0S to P7D");
  }
  const retiring =
    ctx.graceMs === 0
      ? null
      : { secret: task.webhookSecret, until: (ctx.now + ctx.graceMs) as Instant };
  return {
    task: { ...task, webhookSecret: ctx.secret, retiringSecret: retiring, updatedAt: ctx.now },
    newRuns: [],
    runUpdates: [],
    cancelTargets: [],
  };
}

/** The secrets valid at `now`: the current one first, then the retiring one while its grace lasts. */
export function validSecrets(task: Task, now: Instant): readonly string[] {
  const retiring = task.retiringSecret;
  return retiring != null && now < retiring.until
    ? [task.webhookSecret, retiring.secret]
    : [task.webhookSecret];
}
