/**
 * The dashboard (docs/dashboard.md): `/` serves the page, `/dashboard/<file>.js` its script modules (the
 * `.js` files of browser/, read once when the app is built) and `/dashboard.css` its style, all without a
 * token (the page asks for one and sends it on each `/v1` call). A strict CSP allows only these
 * same-origin files and calls, so no injected markup could run script.
 */
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as z from "zod";
import { HttpProblem } from "../problem.js";
import { defineRoute } from "../route-spec.js";
import { PAGE_HEADERS } from "../security-headers.js";
import type { RouteSpec } from "../route-spec.js";
import { emptyQuery, problemSchema } from "../schemas.js";
import { DASHBOARD_HTML } from "./dashboard-page.js";
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

const SECURITY_HEADERS = { ...PAGE_HEADERS, "content-security-policy": DASHBOARD_CSP };

/**
 * The browser modules' folder, next to this file: under src/ when run from source (the tests), under
 * dist/ as built, where `npm run build` emits them (browser/tsconfig.build.json).
 */
const BROWSER_DIR = new URL("./browser/", import.meta.url);

/** The dashboard's modules by file name. */
function dashboardModules(): ReadonlyMap<string, string> {
  let names: string[];
  try {
    names = readdirSync(BROWSER_DIR).filter((name) => name.endsWith(".js"));
  } catch (error) {
    throw new Error(
      `the dashboard's modules are missing from ${fileURLToPath(BROWSER_DIR)}: \`npm run build\` emits them`,
      { cause: error },
    );
  }
  return new Map(names.map((name) => [name, readFileSync(new URL(name, BROWSER_DIR), "utf8")]));
}

function answer(contentType: string, body: string) {
  return {
    status: 200,
    body,
    headers: { ...SECURITY_HEADERS, "content-type": `${contentType}; charset=utf-8` },
  };
}

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
    handler: () => Promise.resolve(answer(asset.contentType, asset.body)),
  });
}

function modulesRoute(modules: ReadonlyMap<string, string>): RouteSpec {
  return defineRoute({
    method: "GET",
    url: "/dashboard/:file",
    operationId: "dashboardModule",
    summary: "One of the dashboard's script modules (app.js imports the others)",
    tags: ["dashboard"],
    auth: false,
    params: z.strictObject({ file: z.string().meta({ description: "a file name, e.g. app.js" }) }),
    query: emptyQuery,
    responses: {
      200: { description: "text/javascript", schema: z.string(), contentType: "text/javascript" },
      404: { description: "no such module", schema: problemSchema },
    },
    handler: ({ params }) => {
      const body = modules.get(params.file);
      if (body === undefined) {
        const name = params.file.slice(0, 100);
        throw new HttpProblem("route_not_found", `the dashboard has no module ${name}`);
      }
      return Promise.resolve(answer("text/javascript", body));
    },
  });
}

export function dashboardRoutes(): RouteSpec[] {
  return [
    assetRoute({
      url: "/",
      operationId: "dashboard",
      summary: "The dashboard: asks for a token once, then calls /v1 with it",
      contentType: "text/html",
      body: DASHBOARD_HTML,
    }),
    modulesRoute(dashboardModules()),
    assetRoute({
      url: "/dashboard.css",
      operationId: "dashboardStyle",
      summary: "The dashboard's stylesheet",
      contentType: "text/css",
      body: DASHBOARD_CSS,
    }),
  ];
}
