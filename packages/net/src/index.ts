export * from "./ssrf-guard";
export * from "./guarded-request";
