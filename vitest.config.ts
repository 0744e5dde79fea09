import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // `npm test` measures coverage of src/ by layer (docs/architecture.md#coverage-by-layer): V8 sees
    // what the test processes run, not the built CLI that e2e and crash tests start as child processes.
    coverage: {
      provider: "v8",
      include: ["src/**/*.ts"],
      // The dashboard's browser script runs in chromium, where V8 coverage of the test process is blind.
      exclude: ["src/adapters/http/dashboard/browser/**"],
      reporter: [["json-summary", { file: "coverage-summary.json" }]],
      reportsDirectory: "coverage",
      // The figures are printed even when a test failed, beside the failure.
      reportOnFailure: true,
    },
    projects: [
      { extends: true, test: { name: "punctual", include: ["test/**/*.test.ts"] } },
      {
        // The examples import `punctual` through the package's exports (dist/), as a user's code does:
        // their setup builds it first when src/ is newer.
        extends: true,
        test: {
          name: "examples",
          include: ["examples/*/test/**/*.test.ts"],
          globalSetup: ["examples/build-first.ts"],
        },
      },
    ],
  },
});
