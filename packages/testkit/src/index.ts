// The test kit's base: isolated databases and Redis prefixes, private servers, process runners, waiting and
// metrics parsing. The heavier parts are subpaths, so a test loads only what it uses (the API's whole app is
// not loaded by a handler test): "@conveyor/testkit/fakes" (provider fakes), "@conveyor/api/testing" (the
// in-process API, factories, the second org) and "@conveyor/api/testing/stack" (API plus real worker processes).
export * from "./postgres";
export * from "./redis";
export * from "./processes";
export * from "./wait";
export * from "./redis-server";
export * from "./redis-cluster";
export * from "./postgres-server";
export * from "./postgres-replication";
export * from "./pgbouncer";
export * from "./metrics";
export * from "./sse";
export * from "./chromium";
export * from "./suite";
