/** The replica registry port (docs/architecture.md#ports): each replica's heartbeat. */
import type { Instant } from "../time.js";

/** Replica liveness, for handler runs lost with their replica (docs/semantics.md#run-statuses). */
export interface ReplicaRegistry {
  heartbeat(replicaId: string, now: Instant): Promise<void>;
}
