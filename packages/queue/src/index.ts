export * from "./redis";
export * from "./producer";
export * from "./wake-loop";
