// What every other room of the db package stands on: the process' Postgres connections (client.ts) and the one way
// to run a transaction (transaction.ts), database errors told apart (errors.ts), ids, the choice of host for
// multi-host URLs, sealed secrets, LISTEN that outlives its connection, and the SQL fragments and NOTIFY channels
// the job queries share (job-sql.ts). Nothing here knows a table's business, and nothing here imports another room.
export * from "./client";
export { HostChooser, NoSuitableHostError, resolveDatabaseUrl } from "./hosts";
export * from "./ids";
export * from "./errors";
export * from "./transaction";
export { sealSecret, openSecret } from "./secret-box";
export * from "./notifications";
export { DISPATCH_CHANNEL, EVENTS_CHANNEL } from "./job-sql";
