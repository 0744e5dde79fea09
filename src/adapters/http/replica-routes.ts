/**
 * `GET /v1/replicas` (docs/api.md#get-v1replicas): the fleet's replicas, their last heartbeat, whether they are
 * live and the handler names they registered (docs/deploy.md#handler-names). Admin tokens only: a
 * replica belongs to no owner.
 */
import * as z from "zod";
import type { Replica } from "../../domain/ports/replica-registry.js";
import type { Instant } from "../../domain/time.js";
import { HttpProblem } from "./problem.js";
import { actorOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { emptyQuery } from "./schemas.js";
import { COMMON, problem } from "./task-route-shared.js";

export interface ReplicaRouteDeps {
  /** Replicas whose last heartbeat is at or after `since`, latest first, at most `limit`. */
  readonly listReplicas: (since: Instant, limit: number) => Promise<readonly Replica[]>;
  /** A replica whose last heartbeat is older than this is not live (docs/operations.md#replica-liveness-what-silent-means). */
  readonly livenessMs: number;
  readonly now: () => Instant;
}

/** How far back a replica's last heartbeat is still listed. */
const LISTED_FOR_MS = 86_400_000;
/** Replicas listed at most. */
const LISTED_AT_MOST = 200;

const replicaViewSchema = z.object({
  id: z.string(),
  started_at: z.string().describe("its first heartbeat (RFC 3339)"),
  heartbeat_at: z.string().describe("its last heartbeat (RFC 3339)"),
  live: z.boolean().describe("its last heartbeat is within the liveness timeout"),
  handler_names: z
    .array(z.string())
    .nullable()
    .describe("the handler names it serves; null: a version that registers none"),
});

const replicaListSchema = z.object({
  items: z.array(replicaViewSchema),
  liveness_timeout_ms: z.number().int(),
});

export function replicaRoutes(deps: ReplicaRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/v1/replicas",
      operationId: "listReplicas",
      summary: "The replicas that heartbeat in the last 24 hours, latest first (admin)",
      tags: ["system"],
      auth: true,
      query: emptyQuery,
      responses: {
        200: { description: "the replicas", schema: replicaListSchema },
        ...COMMON,
        403: problem("the token is not an admin token"),
      },
      handler: async (ctx) => {
        if (!actorOf(ctx).admin) {
          throw new HttpProblem("forbidden", "listing the replicas needs an admin token");
        }
        const now = deps.now();
        const replicas = await deps.listReplicas((now - LISTED_FOR_MS) as Instant, LISTED_AT_MOST);
        const items = replicas.map((replica) => ({
          id: replica.id,
          started_at: new Date(replica.startedAt).toISOString(),
          heartbeat_at: new Date(replica.heartbeatAt).toISOString(),
          live: replica.heartbeatAt >= now - deps.livenessMs,
          handler_names: replica.handlerNames === null ? null : [...replica.handlerNames],
        }));
        return { status: 200, body: { items, liveness_timeout_ms: deps.livenessMs } };
      },
    }),
  ];
}
