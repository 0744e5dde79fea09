/**
 * The dashboard's page and assets are served without a token, under a strict Content-Security-Policy,
 * and the scripts parse and never write HTML from strings (the browser test drives the rest).
 */
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "../http-harness.js";
import type { TestServer } from "../http-harness.js";
import { loadPage } from "./page-scripts.js";

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
