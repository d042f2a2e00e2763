// The API's test harness (`@conveyor/api/testing`, tests only): an in-process API on its own database and Redis
// prefix, the factories that arrange orgs, members and keys in that database, and the second org every tenant-scoped
// test keeps an eye on. The whole-system stack (this API and worker processes) is `@conveyor/api/testing/stack`.
// It lives with the API, not in @conveyor/testkit, so that the test kit stands below the apps it tests.
export * from "./test-api";
export * from "./factories";
export * from "./second-org";
export * from "./two-orgs";
