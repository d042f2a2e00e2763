// Keeping the database in shape: applying migrations and the stored functions' sources, and checking them against
// schema.prisma and those sources (migrate.ts, functions.ts, drift.ts), retention's deletes and partition drops, the leader's partition maker (partitions.ts), and the leader's expiry of idempotency and dedupe keys. Each duty is called by a
// loop of the worker's leader or by a CLI (../cli/); nothing here answers a request.
export { migrate, migrateDatabase, migrationReport, ensureDatabase, withDatabaseName } from "./migrate";
export { applyFunctionSources, findFunctionDrift, functionsDir, readFunctionSources } from "./functions";
export { findSchemaDrift } from "./drift";
export * from "./retention";
export * from "./partitions";
export * from "./key-expiry";
