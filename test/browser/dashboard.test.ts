/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * The dashboard in a real browser (docs/dashboard.md): Debian's chromium driven by playwright-core against a real
 * server (memory store, coordinator on). Waits are on selectors and texts with bounded timeouts. Without
 * chromium the suite skips on a developer machine and fails under CI (.ci/run installs it).
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
if (!available && !IN_CI) {
  console.warn(
    `skipping the dashboard browser test: no chromium at ${CHROMIUM}. Install it with ` +
      "`sudo apt-get install chromium` (or point PUNCTUAL_CHROMIUM at a Chromium binary).",
  );
}

const WAIT = { timeout: 10_000 };
let t: TestServer;
let browser: Browser;
let page: Page;
let token: string;
let releaseBlocked: () => void = () => undefined;

async function createTask(body: Record<string, unknown>): Promise<string> {
  const answer = await call(t.url, "POST", "/v1/tasks", { token, body });
  expect(answer.status).toBe(201);
  return answer.body.task.id as string;
}

async function signIn(): Promise<void> {
  await page.goto(t.url);
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Use this token" }).click();
  await page.locator("#tasks, main p.muted").first().waitFor(WAIT);
}

/** The next year's March 25, so a daily 02:30 in Europe/Berlin meets the spring gap within 10 fires. */
function beforeSpringGap(): string {
  const now = new Date();
  const year = now.getUTCMonth() < 2 ? now.getUTCFullYear() : now.getUTCFullYear() + 1;
  return `${year}-03-25T00:00:00Z`;
}

describe.skipIf(!available && !IN_CI)("the dashboard in a real browser", () => {
  beforeAll(async () => {
    if (!available) {
      throw new Error(
        `no chromium at ${CHROMIUM}: CI must run the browser test (.ci/run installs it)`,
      );
    }
    t = await startTestServer({
      runCoordinator: true,
      coordinator: { tickMs: 50 },
      handlers: {
        // Runs until cancelled (it honours the abort), so a test can cancel a running run.
        wait: ({ signal }: { signal: AbortSignal }) =>
          new Promise<void>((resolve, reject) => {
            signal.addEventListener("abort", () => {
              reject(new Error("aborted"));
            });
            releaseBlocked = resolve;
          }),
      },
    });
    token = await t.token("alice");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    releaseBlocked();
    if (!available) return;
    await browser.close();
    await t.stop();
  });
  beforeEach(async () => {
    const context = await browser.newContext({ timezoneId: "America/New_York" });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
  });

  it("asks for a token, says when it is refused, then lists tasks with schedules in words", async () => {
    const id = await createTask({
      title: "Morning report",
      schedule: { type: "cron", cron: "0 9 * * *", timezone: "Europe/Paris" },
      target: { kind: "handler", name: "log" },
    });
    const run = await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token });
    expect(run.status).toBe(202);

    await page.goto(t.url);
    await page.getByLabel("Bearer token").fill("not-a-token");
    await page.getByRole("button", { name: "Use this token" }).click();
    await page.getByText("The server refused the token").waitFor(WAIT);

    await page.getByLabel("Bearer token").fill(token);
    await page.getByRole("button", { name: "Use this token" }).click();
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await row.waitFor(WAIT);
    await expect
      .poll(() => row.locator(".schedule-words").textContent())
      .toBe("every day at 09:00 (Europe/Paris)");
    await expect.poll(() => row.textContent()).toContain("(Europe/Paris)");
    await expect.poll(() => row.textContent()).toContain("your time:");
    expect(await page.evaluate("sessionStorage.getItem('punctual.token')")).toBe(token);

    // The triggered run succeeds (coordinator on): the strip and the last result show it after a refresh.
    await expect
      .poll(async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return row.locator(".strip .run-succeeded").count();
      }, WAIT)
      .toBe(1);
    await expect.poll(() => row.locator(".last-result").textContent()).toContain("succeeded");
  });

  it("creates a task through the form, the preview following the cron text and marking DST", async () => {
    await signIn();
    await page.getByRole("link", { name: "New task" }).first().click();
    await page.getByLabel("Title", { exact: true }).fill("Nightly at 02:30");
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    await page.getByLabel("Start at").fill(beforeSpringGap());
    expect(await page.getByLabel("Run at", { exact: false }).isVisible()).toBe(false);
    const cron = page.getByLabel("Cron", { exact: true });
    await cron.fill("0 9 * * *");
    const preview = page.locator("#live-preview");
    await expect
      .poll(() => preview.locator("tbody tr").first().textContent(), WAIT)
      .toContain("09:00:00");
    await expect
      .poll(() => page.locator("#live-words").textContent())
      .toBe("every day at 09:00 (Europe/Berlin)");

    await cron.fill("30 2 * * *");
    await expect
      .poll(() => preview.locator("tbody tr").first().textContent(), WAIT)
      .toContain("02:30:00");
    const dstRow = preview.locator("tr.dst");
    await expect.poll(() => dstRow.count(), WAIT).toBe(1);
    expect(await dstRow.textContent()).toContain("02:30:00 does not exist");
    expect(await dstRow.textContent()).toContain("03:00:00 +02:00");

    await cron.fill("61 2 * * *");
    await expect.poll(() => preview.textContent(), WAIT).toContain("schedule.cron");
    await cron.fill("30 2 * * *");
    await expect.poll(() => preview.locator("tr.dst").count(), WAIT).toBe(1);

    await page.getByRole("button", { name: "Create task" }).click();
    await page.locator("#task-title").waitFor(WAIT);
    expect(await page.locator("#task-title").textContent()).toBe("Nightly at 02:30");
    expect(await page.locator("#notice").textContent()).toContain("Created.");
    await expect.poll(() => page.locator("table.fires tr.dst").count()).toBe(1);
    expect(page.url()).toMatch(/#\/tasks\/[^/]+$/);
  });

  it("pauses, resumes, edits, triggers, cancels the running run and deletes a task", async () => {
    const id = await createTask({
      title: "Waits until cancelled",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "handler", name: "wait" },
    });
    await signIn();
    await page.getByRole("link", { name: "Waits until cancelled" }).click();
    const status = page.locator("h2 .badge");
    await expect.poll(() => status.textContent(), WAIT).toBe("enabled");

    await page.locator("#explain-result p").first().waitFor(WAIT);
    expect(await page.locator("main").textContent()).not.toMatch(/null|undefined|NaN/);

    await page.getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => status.textContent(), WAIT).toBe("paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => status.textContent(), WAIT).toBe("enabled");

    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByLabel("Title", { exact: true }).fill("Waits, edited");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.locator("#task-title").textContent(), WAIT).toBe("Waits, edited");
    const edited = await call(t.url, "GET", `/v1/tasks/${id}`, { token });
    expect(edited.body).toMatchObject({ title: "Waits, edited", version: 2 });
    expect(edited.body.schedule.cron).toBe("0 0 1 1 *");

    await page.getByRole("button", { name: "Trigger now" }).click();
    const run = page.locator("#runs tbody tr").first();
    await expect.poll(() => run.locator(".badge").textContent(), WAIT).toBe("running");
    await run.getByRole("button", { name: "Cancel run" }).click();
    await expect.poll(() => run.locator(".badge").textContent(), WAIT).toBe("cancelled");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await expect
      .poll(() => page.locator("#notice").textContent(), WAIT)
      .toContain("Deleted “Waits, edited”.");
    expect(page.url()).toMatch(/#\/$/);
    expect((await call(t.url, "GET", `/v1/tasks/${id}`, { token })).status).toBe(404);
  });

  it("shows an API problem's title and detail", async () => {
    await signIn();
    await page.goto(`${t.url}/#/tasks/no-such-task`);
    await expect.poll(() => page.locator("#notice").textContent(), WAIT).toContain("no-such-task");
    expect(await page.locator("#notice").getAttribute("class")).toBe("problem");
  });

  it("shows a title made of markup as text, running none of it", async () => {
    const title = `<img src=x onerror="window.__xss = 1"><script>window.__xss = 2</script>`;
    const id = await createTask({
      title,
      description: `<b onmouseover="window.__xss = 3">bold?</b>`,
      schedule: { type: "interval", every: "PT15M" },
      target: { kind: "handler", name: "log" },
    });
    await signIn();
    const link = page.locator(`tr[data-task-id="${id}"] a`);
    await link.waitFor(WAIT);
    expect(await link.textContent()).toBe(title);
    expect(await page.locator(`tr[data-task-id="${id}"] .schedule-words`).textContent()).toBe(
      "every 15 minutes",
    );
    await link.click();
    await expect.poll(() => page.locator("#task-title").textContent(), WAIT).toBe(title);
    expect(await page.getByText("bold?", { exact: false }).textContent()).toContain(
      "<b onmouseover",
    );
    expect(await page.locator("main img, main script, main b").count()).toBe(0);
    expect(await page.evaluate("window.__xss")).toBeUndefined();
  });
});
