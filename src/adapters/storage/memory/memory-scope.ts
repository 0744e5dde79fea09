/** Owner scoping for the memory store: one owner's rows, or every owner's. */
import type { OwnerId } from "../../../domain/ids.js";
import type { OwnerScope } from "../../../domain/ports/queries.js";

export function isVisibleTo(scope: OwnerScope, owner: OwnerId): boolean {
  return scope.kind === "all" || scope.owner === owner;
}
