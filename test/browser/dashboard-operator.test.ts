/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * The dashboard for an operator (docs/dashboard.md), in Debian's chromium through playwright-core against a
 * real server: runs listed by task title, the lateness sparkline's scale, every page usable at 360 px.
 * Waits are on selectors and texts with bounded timeouts. Skips without chromium on a developer machine
 * and fails under CI, as test/browser/dashboard.test.ts does.
 */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, startTestServer } from "../adapters/http/http-harness.js";
import type { TestServer } from "../adapters/http/http-harness.js";

const CHROMIUM = process.env["PUNCTUAL_CHROMIUM"] ?? "/usr/bin/chromium";
const IN_CI = (process.env["CI"] ?? "") !== "";
const available = existsSync(CHROMIUM);

const WAIT = { timeout: 20_000 };
let t: TestServer;
let browser: Browser;
let page: Page;
let token: string;

async function createTask(body: Record<string, unknown>): Promise<string> {
  const answer = await call(t.url, "POST", "/v1/tasks", { token, body });
  expect(answer.status).toBe(201);
  return answer.body.task.id as string;
}

/** Triggers the task and waits until its run has ended. */
async function runOnce(id: string, ends = "succeeded"): Promise<string> {
  const triggered = await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token });
  expect(triggered.status).toBe(202);
  const runId = triggered.body.id as string;
  await expect
    .poll(
      async () => String((await call(t.url, "GET", `/v1/runs/${runId}`, { token })).body.status),
      WAIT,
    )
    .toBe(ends);
  return runId;
}

async function signIn(): Promise<void> {
  await page.goto(t.url);
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Use this token" }).click();
  await page.locator("#tasks, main p.muted").first().waitFor(WAIT);
}

describe.skipIf(!available && !IN_CI)("the dashboard for an operator", () => {
  let taskId = "";
  beforeAll(async () => {
    if (!available) throw new Error(`no chromium at ${CHROMIUM}: CI must run the browser test`);
    t = await startTestServer({
      runCoordinator: true,
      coordinator: { tickMs: 50 },
      handlers: {
        boom: () => {
          throw new Error("the ledger is locked");
        },
      },
    });
    token = await t.token("alice", true);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  /** A task with one succeeded run, made by the first test that needs it. */
  async function ledgerTask(): Promise<string> {
    if (taskId !== "") return taskId;
    taskId = await createTask({
      title: "Nightly ledger close",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "handler", name: "log" },
    });
    await runOnce(taskId);
    return taskId;
  }
  afterAll(async () => {
    if (!available) return;
    await browser.close();
    await t.stop();
  });
  beforeEach(async () => {
    const context = await browser.newContext({ timezoneId: "UTC" });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
  });

  it("lists runs by their task's title and labels the lateness sparkline with its scale", async () => {
    await ledgerTask();
    await signIn();
    const chart = page.locator(`tr[data-task-id="${taskId}"] svg.sparkline`);
    await chart.waitFor(WAIT);
    const scale = await chart.locator("text.scale").allTextContents();
    expect(scale).toHaveLength(2);
    expect(scale[0]).toMatch(/^\d+(\.\d)? m?s$/);
    expect(scale[1]).toBe("0");

    await page.goto(`${t.url}/#/runs`);
    const link = page.locator("#all-runs tbody tr").first().locator("td").nth(1).locator("a");
    await expect.poll(() => link.textContent(), WAIT).toBe("Nightly ledger close");
    expect(await link.getAttribute("href")).toBe(`#/tasks/${taskId}`);
  });

  it("never scrolls sideways at 360 px, on any page, /docs included", async () => {
    await ledgerTask();
    await createTask({
      title: "A task whose rather long title must wrap on a small phone held upright",
      schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Paris" },
      target: { kind: "handler", name: "log" },
    });
    expect(
      (
        await call(t.url, "PUT", "/v1/calendars/holidays", {
          token,
          body: { items: ["2026-12-25"] },
        })
      ).status,
    ).toBeLessThan(300);
    await page.setViewportSize({ width: 360, height: 740 });
    await signIn();
    const pages: [string, string][] = [
      ["#/", "#tasks"],
      [`#/tasks/${taskId}`, "#task-title"],
      [`#/tasks/${taskId}/edit`, "form.task-form"],
      ["#/new", "form.task-form"],
      ["#/runs", "#all-runs"],
      ["#/overview", "#overview"],
      ["#/calendars", "main form"],
      ["#/calendars/holidays", "main textarea"],
    ];
    for (const [hash, ready] of pages) {
      // A full load each time (the token stays in the tab), so `ready` can only match the page asked for.
      await page.goto("about:blank");
      await page.goto(`${t.url}/${hash}`);
      await page.locator(ready).first().waitFor(WAIT);
      const width = Number(await page.evaluate("document.documentElement.scrollWidth"));
      expect({ hash, width }).toEqual({ hash, width: Math.min(width, 360) });
    }
    await page.goto(`${t.url}/docs`);
    await page.locator("details.op").first().waitFor(WAIT);
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(
      360,
    );
  });

  it("renders the Markdown of /docs: code spans are code, not backticks", async () => {
    await page.goto(`${t.url}/docs`);
    await page.locator("details.op").first().waitFor(WAIT);
    const description = page.locator("#description");
    expect(await description.textContent()).not.toContain("`");
    expect(await description.locator("code").first().textContent()).toBe(
      "Authorization: Bearer <token>",
    );
    // Summaries and the descriptions of parameters and responses are prose too (schemas stay JSON).
    const prose = await page.locator("#ops summary, #ops td:not(:has(code))").allTextContents();
    expect(prose.join(" ")).not.toContain("`");
  });

  it("opens an overview of the last hour: runs by status per minute, failure rate, lateness, queue", async () => {
    await ledgerTask();
    const failing = await createTask({
      title: "Ledger export",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "handler", name: "boom" },
    });
    await runOnce(failing, "failed");
    await signIn();
    await page.getByRole("link", { name: "Overview" }).click();
    await page.locator("#overview").waitFor(WAIT);
    expect(await page.locator("#failure-rate").textContent()).toBe("50 % (1 of 2)");
    expect(await page.locator("#ended-count").textContent()).toBe("2");
    expect(await page.locator("#queue-depth").textContent()).toBe("0");
    expect(await page.locator("#lateness-p50").textContent()).toMatch(/^\d+(\.\d)? m?s$/);
    expect(await page.locator("#lateness-p99").textContent()).toMatch(/^\d+(\.\d)? m?s$/);
    const chart = page.locator("svg.overview-chart");
    expect(await chart.locator("rect.run-succeeded").count()).toBe(1);
    expect(await chart.locator("rect.run-failed").count()).toBe(1);
    // The scale's top is the busiest minute: both runs, or one each when a minute turned between them.
    const scale = await chart.locator("text.scale").allTextContents();
    expect(scale.slice(1)).toEqual(["0", "60 min ago", "now"]);
    expect(["1", "2"]).toContain(scale[0]);
    // The fleet: this server's replica, live, with its handlers and a last heartbeat seconds ago.
    const replica = page.locator("#replicas tbody tr.live");
    await replica.waitFor(WAIT);
    expect(await replica.locator(".badge").textContent()).toBe("live");
    expect(await replica.locator("td").nth(1).textContent()).toMatch(/^\d+ s ago$/);
    expect(await replica.locator("td").nth(2).textContent()).toBe("boom, log");
  });

  it("tells an owner's token on the overview that listing replicas needs an admin token", async () => {
    token = await t.token("bob");
    try {
      await signIn();
      await page.getByRole("link", { name: "Overview" }).click();
      await page.locator("#overview").waitFor(WAIT);
      expect(await page.locator("#replicas").textContent()).toBe(
        "Listing the replicas needs an admin token.",
      );
    } finally {
      token = await t.token("alice", true);
    }
  });
});
