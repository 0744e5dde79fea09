/**
 * The dashboard (SPEC 7.4): `/` serves the page, `/dashboard.js` and `/dashboard.css` its script and
 * style, all without a token (the page asks for one and sends it on each `/v1` call). A strict CSP allows
 * only these same-origin files and calls, so no injected markup could run script.
 */
import { z } from "zod";
import { defineRoute } from "../route-spec.js";
import type { RouteSpec } from "../route-spec.js";
import { emptyQuery } from "../schemas.js";
import { DASHBOARD_HTML } from "./dashboard-page.js";
import { DASHBOARD_SCRIPT } from "./dashboard-script.js";
import { DASHBOARD_CSS } from "./dashboard-style.js";

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

interface Asset {
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly contentType: string;
  readonly body: string;
}

function assetRoute(asset: Asset): RouteSpec {
  return defineRoute({
    method: "GET",
    url: asset.url,
    operationId: asset.operationId,
    summary: asset.summary,
    tags: ["dashboard"],
    auth: false,
    query: emptyQuery,
    responses: {
      200: { description: asset.contentType, schema: z.string(), contentType: asset.contentType },
    },
    handler: () =>
      Promise.resolve({
        status: 200,
        body: asset.body,
        headers: { ...SECURITY_HEADERS, "content-type": `${asset.contentType}; charset=utf-8` },
      }),
  });
}

export function dashboardRoutes(): RouteSpec[] {
  return [
    {
      url: "/",
      operationId: "dashboard",
      summary: "The dashboard: asks for a token once, then calls /v1 with it",
      contentType: "text/html",
      body: DASHBOARD_HTML,
    },
    {
      url: "/dashboard.js",
      operationId: "dashboardScript",
      summary: "The dashboard's script",
      contentType: "text/javascript",
      body: DASHBOARD_SCRIPT,
    },
    {
      url: "/dashboard.css",
      operationId: "dashboardStyle",
      summary: "The dashboard's stylesheet",
      contentType: "text/css",
      body: DASHBOARD_CSS,
    },
  ].map(assetRoute);
}
