import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
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
