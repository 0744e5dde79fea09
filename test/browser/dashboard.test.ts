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
        // Always fails: a run for the runs page's Retry.
        boom: () => {
          throw new Error("the report service is down");
        },
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
    // Each Refresh supersedes a render still in flight, so every try waits for its own render to land
    // before it clicks again: on a loaded host a click per poll tick would never let one finish.
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return row
            .locator(".strip .run-succeeded")
            .first()
            .waitFor({ timeout: 2_000 })
            .then(
              () => row.locator(".strip .run-succeeded").count(),
              () => 0,
            );
        },
        { timeout: 30_000 },
      )
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

  it("creates a task with two rules and a day rule to skip, the preview naming rules and exclusions", async () => {
    await signIn();
    await page.getByRole("link", { name: "New task" }).first().click();
    await page.getByLabel("Title", { exact: true }).fill("Weekdays and Saturdays");
    await page.getByLabel("Time zone").fill("UTC");
    await page.getByLabel("Cron", { exact: true }).fill("0 9 * * 1-5\n0 10 * * 6");
    await page.getByLabel("Days to skip", { exact: false }).fill("days:* * mon");
    const preview = page.locator("#live-preview");
    await expect
      .poll(() => preview.locator("td.rule").allTextContents(), WAIT)
      .toContain("0 10 * * 6");
    expect(await preview.locator("td.rule").allTextContents()).toContain("0 9 * * 1-5");
    await expect
      .poll(() => preview.locator(".excluded-note").first().textContent(), WAIT)
      .toMatch(/^excluded: the day rule "\* \* mon" \(\d{4}-\d\d-\d\d 09:00:00\)$/);
    expect(await page.locator("#live-words").textContent()).toBe(
      'every Monday to Friday at 09:00 and every Saturday at 10:00 (UTC), except days "* * mon"',
    );
    for (const wall of await preview.locator("tbody tr td:nth-child(2)").allTextContents()) {
      expect(new Date(`${wall.slice(0, 10)}T00:00:00Z`).getUTCDay()).not.toBe(1);
    }

    await page.getByRole("button", { name: "Create task" }).click();
    await page.locator("#task-title").waitFor(WAIT);
    await expect.poll(() => page.locator("table.fires td.rule").count(), WAIT).toBe(10);
    const id = /#\/tasks\/([^/]+)$/.exec(page.url())?.[1] ?? "";
    const saved = await call(t.url, "GET", `/v1/tasks/${id}`, { token });
    expect(saved.body.schedule).toEqual({
      type: "cron",
      cron: ["0 9 * * 1-5", "0 10 * * 6"],
      timezone: "UTC",
      exclude: [{ days: "* * mon" }],
    });

    await page.getByRole("link", { name: "Edit" }).click();
    expect(await page.getByLabel("Cron", { exact: true }).inputValue()).toBe(
      "0 9 * * 1-5\n0 10 * * 6",
    );
    expect(await page.getByLabel("Days to skip", { exact: false }).inputValue()).toBe(
      "days:* * mon",
    );
  });

  it("creates a calendar, shows its delete refused while a task names it, then deletes it", async () => {
    await signIn();
    await page.getByRole("link", { name: "Calendars" }).first().click();
    await page.getByLabel("Name", { exact: false }).fill("team-days");
    await page
      .getByLabel("Days to skip", { exact: false })
      .fill("2031-12-25\n2031-12-24..2031-12-26");
    await page.getByRole("button", { name: "Save calendar" }).click();
    await expect
      .poll(() => page.locator("#notice").textContent(), WAIT)
      .toContain("Saved “team-days” (version 1); 0 tasks took its items.");
    expect(page.url()).toMatch(/#\/calendars\/team-days$/);
    expect(await page.getByLabel("Days to skip", { exact: false }).inputValue()).toBe(
      "2031-12-25\n2031-12-24..2031-12-26",
    );

    const id = await createTask({
      title: "Skips team days",
      schedule: { type: "cron", cron: "0 9 * * *", exclude: [{ calendar: "team-days" }] },
      target: { kind: "handler", name: "log" },
    });
    page.on("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete calendar" }).click();
    await expect
      .poll(() => page.locator("#notice").textContent(), WAIT)
      .toContain("A task uses this calendar");
    expect(await page.locator("#notice").getAttribute("class")).toBe("problem");
    expect(await page.getByRole("link", { name: "Open that task" }).getAttribute("href")).toBe(
      `#/tasks/${id}`,
    );

    expect((await call(t.url, "DELETE", `/v1/tasks/${id}`, { token })).status).toBe(204);
    await page.getByRole("button", { name: "Delete calendar" }).click();
    await expect
      .poll(() => page.locator("#notice").textContent(), WAIT)
      .toContain("Deleted the calendar “team-days”.");
    expect(page.url()).toMatch(/#\/calendars$/);
    expect((await call(t.url, "GET", "/v1/calendars/team-days", { token })).status).toBe(404);
  });

  it("shows an excluded stretch in the run history with its count and range", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const put = await call(t.url, "PUT", "/v1/calendars/today", {
      token,
      body: { items: [today] },
    });
    expect(put.status).toBe(201);
    const id = await createTask({
      title: "Every second but today",
      schedule: { type: "cron", cron: "* * * * * *", exclude: [{ calendar: "today" }] },
      target: { kind: "handler", name: "log" },
    });
    // Seconds pass excluded (explain names the latest); freeing today then records them as one
    // stretch (docs/schedules.md#calendars).
    const created = Date.parse(
      String((await call(t.url, "GET", `/v1/tasks/${id}`, { token })).body.created_at),
    );
    await expect
      .poll(async () => {
        const now = encodeURIComponent(new Date().toISOString());
        const answer = await call(t.url, "GET", `/v1/tasks/${id}/explain?at=${now}`, { token });
        const occurrence = answer.body.occurrence?.scheduled_for as string | undefined;
        return answer.body.verdict === "excluded" && Date.parse(occurrence ?? "") >= created + 2000;
      }, WAIT)
      .toBe(true);
    await call(t.url, "PUT", "/v1/calendars/today", { token, body: { items: [] } });
    await call(t.url, "POST", `/v1/tasks/${id}/pause`, { token });

    await signIn();
    await page.goto(`${t.url}/#/tasks/${id}`);
    const stretch = page.locator("#runs tr.excluded");
    await stretch.first().waitFor(WAIT);
    expect(await stretch.first().textContent()).toMatch(
      /excluded stretch: \d+ occurrences, .* to .*\(excluded\)/,
    );
    await call(t.url, "DELETE", `/v1/tasks/${id}?force=true`, { token });
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

  it("searches by title or key, shows lateness, and updates live without a click", async () => {
    const invoice = await createTask({
      title: "Alpha invoice run",
      key: "alpha-invoice",
      schedule: { type: "interval", every: "PT1H" },
      target: { kind: "handler", name: "log" },
    });
    await createTask({
      title: "Unrelated digest",
      schedule: { type: "interval", every: "PT1H" },
      target: { kind: "handler", name: "log" },
    });
    expect((await call(t.url, "POST", `/v1/tasks/${invoice}/trigger`, { token })).status).toBe(202);
    await signIn();
    await page.getByLabel("Search tasks by title or key").fill("INVOICE");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("#tasks tbody tr").count(), WAIT).toBe(1);
    const row = page.locator(`tr[data-task-id="${invoice}"]`);
    expect(await row.textContent()).toContain("alpha-invoice");
    expect(page.url()).toContain("search=INVOICE");
    // The triggered run's lateness appears on its own: the list is live.
    await row.locator("svg.sparkline").waitFor({ timeout: 20_000 });
    expect(await row.locator("svg.sparkline").getAttribute("aria-label")).toMatch(
      /launch lateness over the last 1 launched runs/,
    );
    // A task created elsewhere shows up without a click (polling while the tab is visible).
    const later = await createTask({
      title: "Beta invoice run",
      schedule: { type: "interval", every: "PT1H" },
      target: { kind: "handler", name: "log" },
    });
    await page.locator(`tr[data-task-id="${later}"]`).waitFor({ timeout: 20_000 });
    expect(await page.locator(".live").textContent()).toContain("updated");
    // A key searches exactly.
    await page.goto(`${t.url}/#/?search=alpha-invoice`);
    await expect.poll(() => page.locator("#tasks tbody tr").count(), WAIT).toBe(1);
  });

  it("lists failed runs across tasks and retries one from the runs page", async () => {
    const id = await createTask({
      title: "Fails every time",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "handler", name: "boom" },
    });
    const triggered = await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token });
    expect(triggered.status).toBe(202);
    const runId = triggered.body.id as string;
    await expect
      .poll(
        async () => String((await call(t.url, "GET", `/v1/runs/${runId}`, { token })).body.status),
        {
          timeout: 20_000,
        },
      )
      .toBe("failed");
    await signIn();
    await page.getByRole("link", { name: "Runs" }).first().click();
    await page.getByLabel("failed").check();
    await page.getByRole("button", { name: "Apply" }).click();
    expect(page.url()).toContain("status=failed");
    const row = page.locator(`#all-runs tr[data-run-id="${runId}"]`);
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain("the report service is down");
    await row.getByRole("button", { name: "Retry" }).click();
    await expect.poll(() => page.locator("#notice").textContent(), WAIT).toContain("attempt 2");
    // The retry runs, fails again, and the live page shows attempt 2 without a click.
    await expect.poll(() => row.locator("td").nth(5).textContent(), { timeout: 20_000 }).toBe("2");
    const after = await call(t.url, "GET", `/v1/runs/${runId}`, { token });
    expect(after.body).toMatchObject({ status: "failed", attempt: 2 });
  });

  it("is readable at 320 px wide and reachable by keyboard", async () => {
    await createTask({
      title: "A task with a rather long title that must wrap on a narrow phone screen",
      schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Paris" },
      target: { kind: "handler", name: "log" },
    });
    await page.setViewportSize({ width: 320, height: 640 });
    await signIn();
    // The page itself never scrolls sideways; wide tables scroll inside their own box.
    const width = Number(await page.evaluate("document.documentElement.scrollWidth"));
    expect(width).toBeLessThanOrEqual(320);
    // Tab reaches the search box, then typing and Enter searches.
    let focused = "";
    for (let i = 0; i < 30 && focused !== "search"; i++) {
      await page.keyboard.press("Tab");
      focused = String(
        await page.evaluate(
          "document.activeElement && document.activeElement.getAttribute('name')",
        ),
      );
    }
    expect(focused).toBe("search");
    await page.keyboard.type("rather long");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url(), WAIT).toContain("search=rather");
    await page.goto(`${t.url}/#/runs`);
    await page.getByRole("button", { name: "Apply" }).waitFor(WAIT);
    expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(
      320,
    );
  });
});
