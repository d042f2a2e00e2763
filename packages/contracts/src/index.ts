export * from "./limits";
export * from "./catalog";
export * from "./templates";
export * from "./url-policy";
export * from "./handler";
export * from "./schedules";
export * from "./job-filter";
export * from "./events";
