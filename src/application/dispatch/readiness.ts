/**
 * Why a replica is not ready (docs/operations.md#metrics-and-probes), as every `/readyz` answers it:
 * shutting down, not started, the database unreachable, or migrations not current. One wording for
 * `punctual serve`'s route and the worker's probe port.
 */

import type { MigrationStatus } from "../../domain/ports/store.js";

/** What readiness asks of the store. */
export interface ReadinessStore {
  ping(): Promise<void>;
  migrationStatus(): Promise<MigrationStatus>;
}

/** The reason the replica is not ready, or null when it is. */
export async function notReadyReason(
  store: ReadinessStore,
  state: { readonly started: boolean; readonly stopping: boolean },
): Promise<string | null> {
  if (state.stopping) return "shutting down";
  if (!state.started) return "starting";
  try {
    await store.ping();
  } catch (error) {
    return `the database is unreachable: ${error instanceof Error ? error.message : String(error)}`;
  }
  const status = await store.migrationStatus();
  if (!status.current) {
    return `migrations are not current (pending: ${status.pending.join(", ") || "none"})`;
  }
  return null;
}
