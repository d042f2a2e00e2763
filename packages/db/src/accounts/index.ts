// Accounts and access (docs/reference/tenants.md#the-console, docs/reference/tenants.md#audit-log, docs/reference/events.md#progress-and-live-results): users, organizations, memberships and invites, console sessions, API
// keys and what authentication reads on every request (credentials.ts), single sign-on, public tokens, and the audit
// log that records who changed what in the same transaction as the change. Nothing here changes a job.
export * from "./credentials";
export * from "./users";
export * from "./organizations";
export * from "./memberships";
export * from "./invites";
export * from "./api-keys";
export * from "./sessions";
export * from "./public-tokens";
export * from "./audit-log";
export * from "./sso";
