/**
 * `/docs` in a real browser under its own Content-Security-Policy (docs/security.md#pages-and-media-types):
 * the inline script and style the CSP admits by hash run (the operations render), and no CSP violation is
 * reported. Skips without chromium on a developer machine, fails under CI (as the dashboard test).
 */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

const CHROMIUM = process.env["PUNCTUAL_CHROMIUM"] ?? "/usr/bin/chromium";
const IN_CI = (process.env["CI"] ?? "") !== "";
const available = existsSync(CHROMIUM);

describe.skipIf(!available && !IN_CI)("/docs in a real browser", () => {
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    if (!available) throw new Error(`no chromium at ${CHROMIUM}: CI must run the browser test`);
    t = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser.close();
    await t.stop();
  });

  it("renders the operations with its inline script and style, and breaks no CSP rule", async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${t.url}/docs`);
    await page.locator("details.op").first().waitFor({ timeout: 10_000 });
    expect(await page.locator("#ops").textContent()).toContain("/v1/tasks");
    // The inline style applied: summaries carry the method colours.
    const color: unknown = await page.evaluate(
      "getComputedStyle(document.querySelector('span.m.GET')).color",
    );
    expect(color).toBe("rgb(21, 101, 192)");
    expect(violations).toEqual([]);
    await page.close();
  });
});
