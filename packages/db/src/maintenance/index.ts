// Keeping the database in shape: applying migrations and checking them against schema.prisma (migrate.ts,
// drift.ts), retention's deletes, and the leader's expiry of idempotency and dedupe keys. Each duty is called by a
// loop of the worker's leader or by a CLI (../cli/); nothing here answers a request.
export { migrate, ensureDatabase, withDatabaseName } from "./migrate";
export { findSchemaDrift } from "./drift";
export * from "./retention";
export * from "./key-expiry";
