// Tests run TypeScript sources directly (the "conveyor-source" export condition), transformed by SWC,
// against the real Postgres and Redis of the machine. See packages/testkit for the isolation rules.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  testEnvironmentOptions: { customExportConditions: ["conveyor-source", "node", "require", "default"] },
  transform: {
    "^.+\\.(t|j|mj)s$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }],
  },
  // ES modules among the dependencies: Prisma's schema engine glue, uuid (ES modules only since 12), and openid-client with
  // the two libraries it is built on.
  // The client package names its relative imports as their built files (`./events.js`), as Node's ES modules need.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transformIgnorePatterns: ["/node_modules/(?!(@prisma/schema-engine-wasm|uuid|openid-client|oauth4webapi|jose)/)"],
  testMatch: ["<rootDir>/{apps,packages}/*/{src,test}/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/packages/testkit/src/global-setup.ts",
  testTimeout: 60_000,
  // Two cores: more parallel files than that only makes the process-level tests slower and flakier.
  maxWorkers: 2,
};
