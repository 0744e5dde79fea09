/**
 * The dashboard's page and assets are served without a token, under a strict Content-Security-Policy;
 * every script the page loads (its entry module, then what each module imports) is served at the URL
 * that names it, under the same policy; and no script writes HTML from strings (the browser test drives
 * the rest).
 */
import { readdirSync } from "node:fs";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "../http-harness.js";
import type { TestServer } from "../http-harness.js";
import { loadPage } from "./page-scripts.js";

/** Written out, not imported: a looser policy in the source must fail here. */
const STRICT_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
  "img-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
const BROWSER_DIR = new URL("../../../../src/adapters/http/dashboard/browser/", import.meta.url);

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

describe("the dashboard routes", () => {
  it.each([
    ["/", "text/html", "<title>punctual</title>"],
    ["/dashboard/api.js", "text/javascript", "sessionStorage"],
    ["/dashboard.css", "text/css", ".badge"],
  ])("serve %s as %s without a token, under a strict CSP", async (path, type, excerpt) => {
    const answer = await call(t.url, "GET", path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe(`${type}; charset=utf-8`);
    expect(String(answer.body)).toContain(excerpt);
    const csp = answer.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("loads its script and style from files, not inline", async () => {
    const page = String((await call(t.url, "GET", "/")).body);
    expect(page).toContain('<script type="module" src="/dashboard/app.js"></script>');
    expect(page).not.toMatch(/<script>|<style>|style="|\son\w+=/);
  });

  it("serves the page and every script it loads, at the URL that names it, under the strict CSP", async () => {
    const page = await loadPage(t.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(STRICT_CSP);
    for (const script of page.scripts) {
      expect(new URL(script.url).origin, script.url).toBe(new URL(t.url).origin);
      expect(script.status, script.url).toBe(200);
      expect(script.headers.get("content-type"), script.url).toBe("text/javascript; charset=utf-8");
      expect(script.headers.get("content-security-policy"), script.url).toBe(STRICT_CSP);
      expect(script.headers.get("x-content-type-options"), script.url).toBe("nosniff");
    }
    // Every module in the folder is one the page loads, so the walk above reached them all.
    const modules = readdirSync(BROWSER_DIR).filter((name) => name.endsWith(".js"));
    expect(page.scripts.map((script) => new URL(script.url).pathname).sort()).toEqual(
      modules.map((name) => `/dashboard/${name}`).sort(),
    );
  });

  it("answers 404 for a module it does not have", async () => {
    for (const path of [
      "/dashboard/nope.js",
      "/dashboard/..%2Fdashboard-routes.ts",
      "/dashboard/",
    ]) {
      expect((await call(t.url, "GET", path)).status, path).toBe(404);
    }
  });

  it("ships scripts that parse and never write HTML from strings", async () => {
    const { scripts } = await loadPage(t.url);
    expect(scripts.length).toBeGreaterThan(1);
    for (const script of scripts) {
      const parsed = ts.transpileModule(script.body, {
        fileName: new URL(script.url).pathname,
        reportDiagnostics: true,
        compilerOptions: { allowJs: true, module: ts.ModuleKind.ESNext },
      });
      expect(parsed.diagnostics ?? [], script.url).toEqual([]);
      expect(script.body, script.url).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write/,
      );
    }
  });
});
