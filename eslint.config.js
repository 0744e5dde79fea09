// ESLint flat config: the type-aware promise and exhaustiveness rules are the point (CONVENTIONS "Tooling").
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import { importX } from "eslint-plugin-import-x";

const DASHBOARD_JS = "src/adapters/http/dashboard/browser/**/*.js";

const layer = (files, patterns) => ({
  files,
  rules: { "no-restricted-imports": ["error", { patterns }] },
});

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "bench/results/", "bin/", "scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    rules: {
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "import-x/no-cycle": "error",
    },
  },
  layer(
    ["src/domain/**/*.ts"],
    [
      { group: ["node:*"], message: "The domain is pure (SPEC 9): no Node built-ins." },
      {
        group: ["../application/*", "../runtime/*", "../adapters/*", "../client/*", "../../*"],
        message: "The domain imports only the domain (SPEC 9).",
      },
    ],
  ),
  layer(
    ["src/application/**/*.ts"],
    [
      { group: ["node:*"], message: "The application layer does no I/O of its own." },
      {
        group: ["**/runtime/*", "**/adapters/*", "**/client/*", "**/cli/*", "**/composition*"],
        message: "application imports domain only.",
      },
    ],
  ),
  layer(
    ["src/runtime/**/*.ts"],
    [
      {
        group: ["**/adapters/*", "**/client/*", "**/cli/*", "**/composition*"],
        message: "The runtime receives adapters already built.",
      },
    ],
  ),
  layer(
    ["src/adapters/storage/**/*.ts"],
    [
      {
        group: ["**/domain/task-commands.js", "**/domain/task-fields.js"],
        message: "A store writes the decision it is handed (docs/architecture.md#stores).",
      },
    ],
  ),
  {
    // punctual/client ships without the scheduler: it takes only types from it (docs/decisions.md).
    files: ["src/client.ts", "src/client/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*"], message: "punctual/client needs only fetch: no Node built-ins." },
            {
              group: ["**/adapters/*", "**/runtime/*", "**/composition.js", "**/index.js"],
              message: "punctual/client is a client of the HTTP API, not of the scheduler.",
            },
            {
              group: ["**/application/*", "**/domain/*"],
              allowTypeImports: true,
              message: "punctual/client takes only types from the application and the domain.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ignores: [DASHBOARD_JS],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The dashboard's browser modules: JS checked by tsc (browser/tsconfig.json, checkJs), so they take
    // the type-aware rules like the TS sources, and tsc, not no-undef, knows the DOM's globals.
    files: [DASHBOARD_JS],
    rules: tseslint.configs.eslintRecommended.rules,
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "examples/*/test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  prettier,
);
