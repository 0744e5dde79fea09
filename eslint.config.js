// ESLint flat config: the type-aware promise and exhaustiveness rules are the point (CONVENTIONS "Tooling").
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import { importX } from "eslint-plugin-import-x";

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
        group: ["../application/*", "../runtime/*", "../adapters/*", "../../*"],
        message: "The domain imports only the domain (SPEC 9).",
      },
    ],
  ),
  layer(
    ["src/application/**/*.ts"],
    [
      { group: ["node:*"], message: "The application layer does no I/O of its own." },
      { group: ["../runtime/*", "../adapters/*"], message: "application imports domain only." },
    ],
  ),
  layer(
    ["src/runtime/**/*.ts"],
    [{ group: ["../adapters/*"], message: "The runtime receives adapters already built." }],
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
    files: ["**/*.js", "**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  prettier,
);
