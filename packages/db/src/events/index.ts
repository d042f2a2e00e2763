// Events and webhooks (docs/reference/events.md#events): reading the event log without gaps below its horizon (events.ts); webhook
// endpoints and their deliveries as the API manages them (webhooks.ts), the relay that turns events into delivery
// jobs exactly once (webhook-relay.ts), one delivery attempt's reads and record (webhook-delivery.ts), and delivery filters with bulk
// redelivery (webhook-redelivery.ts). Events
// are written by the job machine with each transition, never here.
export * from "./events";
export * from "./webhooks";
export * from "./webhook-delivery";
export * from "./webhook-relay";
export * from "./webhook-redelivery";
