/**
 * The dashboard as `npm start` serves it: the built CLI's `serve` answers the page and every script it
 * loads from dist/ (where `npm run build` emits the browser modules), under the strict CSP.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPage } from "../adapters/http/dashboard/page-scripts.js";
import { ROOT, ensureBuilt } from "./build.js";
import { startCli, stopCli, waitFor } from "./process.js";
import type { CliProcess } from "./process.js";

let dir: string;
let serve: CliProcess | null = null;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-dashboard-e2e-"));
}, 240_000);
afterAll(async () => {
  if (serve !== null && serve.child.exitCode === null) await stopCli(serve, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("the built dashboard", () => {
  it("serves the page and every module it loads from dist/", async () => {
    const db = join(dir, "punctual.db");
    serve = startCli(["serve", "--database", db, "--port", "0", "--log-level", "info"], {
      cwd: dir,
    });
    const cli = serve;
    const base = await waitFor(
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1],
      { timeoutMs: 20_000, what: "the server to listen", describe: () => cli.output() },
    );
    const page = await loadPage(base);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy");
    expect(csp).toContain("script-src 'self'");
    for (const script of page.scripts) {
      expect(script.status, script.url).toBe(200);
      expect(script.headers.get("content-security-policy"), script.url).toBe(csp);
    }
    const built = readdirSync(join(ROOT, "dist/adapters/http/dashboard/browser"));
    expect(page.scripts.map((script) => new URL(script.url).pathname).sort()).toEqual(
      built
        .filter((name) => name.endsWith(".js"))
        .map((name) => `/dashboard/${name}`)
        .sort(),
    );
    expect((await stopCli(cli, "SIGTERM")).code).toBe(0);
  });
});
