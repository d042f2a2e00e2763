// Usage and quotas (docs/reference/tenants.md#usage-quotas-and-backpressure): what each organization used per day and job type, and what it may create. Usage is
// counted by the database's triggers in the statements that do the work; nothing here counts it by hand.
export * from "./usage";
export * from "./quotas";
