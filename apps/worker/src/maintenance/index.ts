// The leader's upkeep duties, one file each, each running only while this replica leads: schedules
// (scheduler.ts), retention of finished jobs, audit entries, waitpoints and webhook deliveries (retention.ts and the
// *-retention.ts beside it), key expiry, the partition maker (partition-maker.ts), the usage fold, waitpoint expiry, the webhook relay (events to delivery
// jobs), the worker reaper and the reconciler. periodic-task.ts is the shape the small ones share.
export {};
