export * from "./redis";
export * from "./producer";
