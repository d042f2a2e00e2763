export * from "./limits";
export * from "./catalog";
export * from "./templates";
export * from "./url-policy";
export * from "./handler";
