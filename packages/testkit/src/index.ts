export * from "./postgres";
export * from "./redis";
export * from "./processes";
export * from "./wait";
export * from "./redis-server";
export * from "./postgres-server";
export * from "./metrics";
