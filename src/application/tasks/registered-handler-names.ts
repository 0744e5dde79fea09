/**
 * The handler names the live replicas registered with their heartbeats (docs/deploy.md#handler-names),
 * which a process accepts in handler targets besides its own: an API-only process learns the fleet's
 * handlers from the database instead of loading their code.
 */
import type { ReplicaRegistry } from "../../domain/ports/replica-registry.js";
import type { Instant } from "../../domain/time.js";

/** Replicas read at most (a fleet larger than this is not expected). */
const REPLICAS_READ = 1_000;

/** The names registered by replicas whose heartbeat is at or after `liveSince`. */
export async function registeredHandlerNames(
  replicas: ReplicaRegistry,
  liveSince: Instant,
): Promise<ReadonlySet<string>> {
  const names = new Set<string>();
  for (const replica of await replicas.listReplicas(liveSince, REPLICAS_READ)) {
    for (const name of replica.handlerNames ?? []) names.add(name);
  }
  return names;
}
