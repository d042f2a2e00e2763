export * from "./limits";
export * from "./job-states";
export * from "./flow-control";
export * from "./catalog";
export * from "./templates";
export * from "./url-policy";
export * from "./handler";
export * from "./schedules";
export * from "./schedule-plan";
export * from "./job-filter";
export * from "./events";
export * from "./audit";
export * from "./live";

export * from "./waitpoints";
export * from "./alerts";
export * from "./console-pages";
export * from "./job-shape";
