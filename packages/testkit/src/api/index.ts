// The API side of the test kit: an in-process API on its own database and Redis prefix, the factories that
// arrange orgs, members and keys in that database, and the second org every tenant-scoped test keeps an eye on.
export * from "./test-api";
export * from "./factories";
export * from "./second-org";
export * from "./two-orgs";
