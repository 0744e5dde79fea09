/**
 * The dashboard's page and assets are served without a token, under a strict Content-Security-Policy,
 * and the script parses and never writes HTML from strings (the browser test drives the rest).
 */
import { Script } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_SCRIPT } from "../../../../src/adapters/http/dashboard/dashboard-script.js";
import { call, startTestServer } from "../http-harness.js";
import type { TestServer } from "../http-harness.js";

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
    ["/dashboard.js", "text/javascript", "sessionStorage"],
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
    expect(page).toContain('<script src="/dashboard.js" defer></script>');
    expect(page).not.toMatch(/<script>|<style>|style="|\son\w+=/);
  });

  it("ships a script that parses and never writes HTML from strings", () => {
    expect(() => new Script(DASHBOARD_SCRIPT)).not.toThrow();
    expect(DASHBOARD_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });
});
