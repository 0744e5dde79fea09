/**
 * Who is calling: an owner, and whether the caller is an admin (who sees every owner's tasks). The
 * library acts as the default owner `local`.
 */
import type { OwnerId } from "../../domain/ids.js";
import type { OwnerScope } from "../../domain/ports/queries.js";

export interface Actor {
  readonly owner: OwnerId;
  readonly admin: boolean;
}

export const LOCAL_OWNER = "local" as OwnerId;

/** The library's actor: the default owner, seeing its own tasks. */
export const LOCAL_ACTOR: Actor = Object.freeze({ owner: LOCAL_OWNER, admin: false });

/** The rows an actor may see. */
export function scopeOf(actor: Actor): OwnerScope {
  return actor.admin ? { kind: "all" } : { kind: "owner", owner: actor.owner };
}
