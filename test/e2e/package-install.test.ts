/**
 * punctual as a consumer gets it (docs/first-job.md#installing): the packed tarball installed into a
 * scratch project outside the repository, without our devDependencies. Its declarations compile under
 * `strict` with `skipLibCheck: false`, npm reports no engine warning on the Node 20 we support, the
 * first job runs, and the `punctual` command answers.
 *
 * To keep the test quick, npm installs without running install scripts, and better-sqlite3 (pinned in the
 * scratch project to the version this repository uses) gets this repository's compiled binary instead of
 * compiling its own: compiling it takes minutes where no prebuilt binary can be downloaded, and it proves
 * nothing about punctual's package.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, ensureBuilt } from "./build.js";

const run = promisify(execFile);

const CONSUMER = `import { createScheduler, sqlite } from "punctual";
import type { Handler } from "punctual";
import { PunctualClient } from "punctual/client";
import { createTestScheduler } from "punctual/testing";

let reminded: (to: string) => void = () => undefined;
const remindedTo = new Promise<string>((resolve) => (reminded = resolve));
const sendReminder: Handler = ({ input }) => {
  reminded((input as { to: string }).to);
  return Promise.resolve({ sent: true });
};
const scheduler = createScheduler({ store: sqlite("punctual.db"), handlers: { sendReminder } });
await scheduler.start();
const { task } = await scheduler.tasks.create({
  title: "Weekday reminder",
  schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
  target: { kind: "handler", name: "sendReminder", input: { to: "team" } },
});
await scheduler.tasks.trigger(task.id);
console.log(\`reminded \${await remindedTo}\`);
await scheduler.stop();
console.log(typeof PunctualClient, typeof createTestScheduler);
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    skipLibCheck: false,
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    outDir: "out",
    types: ["node"],
  },
  files: ["main.ts"],
};

interface Package {
  readonly scripts: Record<string, string>;
  readonly version: string;
}

function readPackage(path: string): Package {
  return JSON.parse(readFileSync(path, "utf8")) as Package;
}

describe("the packed package in a consumer project", () => {
  let dir = "";
  let app = "";
  let installOutput = "";

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "punctual-package-"));
    app = join(dir, "app");
    mkdirSync(app);
    // dist/ is fresh: packing skips the prepack build that a clone's `npm pack` runs.
    const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], {
      cwd: ROOT,
      timeout: 60_000,
    });
    const tarball = join(dir, packed.stdout.trim().split("\n").at(-1) ?? "");
    const sqliteVersion = readPackage(
      join(ROOT, "node_modules/better-sqlite3/package.json"),
    ).version;
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
        overrides: { "better-sqlite3": sqliteVersion },
      }),
    );
    const installed = await run(
      "npm",
      ["install", tarball, "@types/node@20", "--ignore-scripts", "--prefer-offline"].concat([
        "--no-audit",
        "--no-fund",
        "--loglevel=warn",
      ]),
      { cwd: app, timeout: 150_000 },
    );
    installOutput = installed.stdout + installed.stderr;
    const binary = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    mkdirSync(join(app, "node_modules/better-sqlite3/build/Release"), { recursive: true });
    copyFileSync(join(ROOT, binary), join(app, binary));
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(TSCONFIG));
    writeFileSync(join(app, "main.ts"), CONSUMER);
  }, 240_000);

  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("builds dist/ whenever it is packed or installed from git", () => {
    expect(readPackage(join(ROOT, "package.json")).scripts["prepack"]).toBe("npm run build");
  });

  it("installs without an engine warning on Node 20", () => {
    expect(installOutput).not.toMatch(/EBADENGINE|Unsupported engine/);
  });

  it("type-checks strictly with skipLibCheck off and runs a first job", async () => {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const compiled = await run(process.execPath, [tsc, "-p", "."], { cwd: app, timeout: 120_000 })
      .then(() => "")
      .catch((error: unknown) => String((error as { stdout?: string }).stdout));
    expect(compiled).toBe("");
    const { stdout } = await run(process.execPath, ["out/main.js"], { cwd: app, timeout: 30_000 });
    expect(stdout).toBe("reminded team\nfunction function\n");
  }, 150_000);

  it("puts the punctual command on the path", async () => {
    const { stdout } = await run("npx", ["--no-install", "punctual", "--version"], {
      cwd: app,
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe(readPackage(join(ROOT, "package.json")).version);
  });
});
