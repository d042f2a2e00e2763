// @conveyor/db: every read and write of Postgres, in rooms by concern, each with an index.ts saying what it owns:
// core/ (connections, transactions, shared SQL), job-machine/ (every change of a job's state), jobs/, flow/
// (dispatch and flow control), events/ (event log, webhooks), accounts/ (users, organizations, access, audit),
// schedules/, usage/ (usage, quotas), maintenance/ (migrations, drift, retention, key expiry). cli/ holds the npm
// scripts' entry points.
export * from "./core";
export * from "./job-machine";
export * from "./jobs";
export * from "./flow";
export * from "./events";
export * from "./accounts";
export * from "./schedules";
export * from "./usage";
export * from "./maintenance";
export * from "./alerts";
