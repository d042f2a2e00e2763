// ESLint with typescript-eslint's type-aware rules where they catch real bugs (promises nobody awaits or that
// are handed to callbacks expecting void, `any` leaking into typed code), and Prettier for layout (run
// separately, `npm run format`); eslint-config-prettier turns off the rules Prettier owns.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "packages/db/src/generated/**",
      "packages/client/src/schema.d.ts",
      "test-artifacts/**",
      "bench/results/**",
      "**/*.js",
      "**/*.mjs",
    ],
  },
  // A disable comment that no longer suppresses anything fails the lint instead of lingering.
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false, attributes: false } }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      // Only `declare global { namespace Express ... }` augmentation, which emits no code; runtime namespaces stay out.
      "@typescript-eslint/no-namespace": ["error", { allowDeclarations: true }],
      "no-console": "error",
      // CONTRIBUTING: another workspace is imported by its package name (its exports map), never by a src/ path.
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/apps/*/src", "**/apps/*/src/**", "**/packages/*/src", "**/packages/*/src/**"],
              message: "Import another workspace by its package name (its exports, or apps/*/src/index.ts), not by its src/ path.",
            },
          ],
        },
      ],
    },
  },
  {
    // Application code: no `any` flowing into typed values.
    files: ["apps/*/src/**/*.{ts,tsx}", "packages/*/src/**/*.{ts,tsx}"],
    ignores: ["packages/testkit/**"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "error",
      "@typescript-eslint/no-unsafe-member-access": "error",
      "@typescript-eslint/no-unsafe-call": "error",
      "@typescript-eslint/no-unsafe-return": "error",
      "@typescript-eslint/no-unsafe-argument": "error",
    },
  },
  {
    // CONTRIBUTING "Reach Postgres one way": the service's code reaches Postgres with raw SQL on `db.pool` and runs
    // transactions with `inTransaction`; Prisma's client is for the schema, the migrations and tests' fixtures.
    files: ["apps/*/src/**/*.{ts,tsx}", "packages/*/src/**/*.{ts,tsx}"],
    ignores: ["packages/testkit/**", "packages/db/src/prisma.ts", "packages/db/src/generated/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[property.name='prisma']",
          message: "Reach Postgres through the db package's functions on db.pool (CONTRIBUTING: Reach Postgres one way), not Prisma's client.",
        },
        {
          selector: "CallExpression[callee.property.name='query'] > Literal[value=/^\\s*(BEGIN|START TRANSACTION)\\b/i]",
          message:
            "Run a transaction with inTransaction (packages/db/src/core/transaction.ts), which rolls back, drops a broken connection and knows the retryable codes.",
        },
      ],
    },
  },
  {
    // Tests, benchmarks and scripts may print, and read untyped response bodies.
    files: ["**/test/**/*.ts", "test/**/*.ts", "packages/testkit/**/*.ts", "apps/*/testing/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts", "**/cli/**/*.ts"],
    rules: { "no-console": "off", "@typescript-eslint/no-explicit-any": "off" },
  },
  prettier,
);
