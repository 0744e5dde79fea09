/**
 * The routes without a bearer token (docs/security.md): health, readiness, metrics, the OpenAPI document and its
 * page (the dashboard's page and assets are in dashboard/dashboard-routes.ts).
 */
import * as z from "zod";
import type { MigrationStatus } from "../../domain/ports/store.js";
import { DOCS_PAGE } from "./docs-page.js";
import type { SchedulerMetrics } from "../metrics/scheduler-metrics.js";
import { inlinePageCsp, PAGE_HEADERS } from "./security-headers.js";
import { notReadyReason } from "../../application/dispatch/readiness.js";
import { HttpProblem } from "./problem.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { emptyQuery, healthSchema, problemSchema } from "./schemas.js";

export interface SystemRouteDeps {
  readonly health: {
    ping(): Promise<void>;
    migrationStatus(): Promise<MigrationStatus>;
  };
  readonly isShuttingDown: () => boolean;
  readonly metrics: SchedulerMetrics;
  /** The OpenAPI document (built once every route is known). */
  readonly openApi: () => unknown;
}

const SYSTEM = ["system"];

/** `/docs` runs its one inline script and style, and calls only `/openapi.json`. */
const DOCS_CSP = inlinePageCsp(DOCS_PAGE);

export function systemRoutes(deps: SystemRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/healthz",
      operationId: "health",
      summary: "Liveness: the process answers",
      tags: SYSTEM,
      auth: false,
      query: emptyQuery,
      responses: { 200: { description: "alive", schema: healthSchema } },
      handler: () => Promise.resolve({ status: 200, body: { status: "ok" } }),
    }),
    defineRoute({
      method: "GET",
      url: "/readyz",
      operationId: "ready",
      summary: "Readiness: database reachable, migrations current, not shutting down",
      tags: SYSTEM,
      auth: false,
      query: emptyQuery,
      responses: {
        200: { description: "ready", schema: healthSchema },
        503: { description: "not ready", schema: problemSchema },
      },
      handler: async () => {
        const reason = await notReadyReason(deps.health, {
          started: true,
          stopping: deps.isShuttingDown(),
        });
        if (reason !== null) throw new HttpProblem("not_ready", reason);
        return { status: 200, body: { status: "ready" } };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/metrics",
      operationId: "metrics",
      summary: "Prometheus metrics",
      tags: SYSTEM,
      auth: false,
      query: emptyQuery,
      responses: {
        200: {
          description: "text exposition format",
          schema: z.string(),
          contentType: "text/plain",
        },
      },
      handler: async () => ({
        status: 200,
        body: await deps.metrics.registry.metrics(),
        headers: { "content-type": deps.metrics.registry.contentType },
      }),
    }),
    defineRoute({
      method: "GET",
      url: "/openapi.json",
      operationId: "openapi",
      summary: "This OpenAPI 3.1 document",
      tags: SYSTEM,
      auth: false,
      query: emptyQuery,
      responses: {
        200: { description: "the document", schema: z.record(z.string(), z.unknown()) },
      },
      handler: () => Promise.resolve({ status: 200, body: deps.openApi() }),
    }),
    defineRoute({
      method: "GET",
      url: "/docs",
      operationId: "docs",
      summary: "A browsable page of this document",
      tags: SYSTEM,
      auth: false,
      responses: { 200: { description: "HTML", schema: z.string(), contentType: "text/html" } },
      handler: () =>
        Promise.resolve({
          status: 200,
          body: DOCS_PAGE,
          headers: {
            ...PAGE_HEADERS,
            "content-security-policy": DOCS_CSP,
            "content-type": "text/html; charset=utf-8",
          },
        }),
    }),
  ];
}
