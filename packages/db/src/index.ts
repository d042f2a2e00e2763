export * from "./client";
export * from "./ids";
export * from "./errors";
export { migrate, ensureDatabase } from "./migrate";
export { findSchemaDrift } from "./drift";
export * from "./credentials";
