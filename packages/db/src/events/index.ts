// Events and webhooks (SPEC §10): reading the event log without gaps below its horizon (events.ts), and webhook
// endpoints with their deliveries (webhooks.ts). Events are written by the job machine with each transition, never
// here.
export * from "./events";
export * from "./webhooks";
