/**
 * The loaded pass of `npm test` (docs/operations.md#on-a-loaded-host): the crash tests of test/race/ a
 * second time, one file after another, while two busy loops take the CPU (test/race/loaded/busy-loops.ts).
 * It runs after the rest of the suite, so that the loops slow no other test file.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/race/crash-postgres.test.ts", "test/race/crash-sqlite.test.ts"],
    globalSetup: ["test/race/loaded/busy-loops.ts"],
    fileParallelism: false,
    env: { PUNCTUAL_LOADED_PASS: "1" },
    testTimeout: 150_000,
    hookTimeout: 240_000,
  },
});
