// Flow control (docs/reference/time.md#time-priority-and-fairness, docs/reference/flow-control.md#flow-control, docs/reference/high-availability.md#scale-out-and-observability, docs/reference/tenants.md#usage-quotas-and-backpressure): which due job runs next (dispatch.ts, the dispatcher's one decision), the
// limits it obeys (flow-control.ts: rate limits, queue settings, type state), and the backlog read for autoscaling
// and for backpressure; the registry of live worker processes the console's Workers view reads (workers.ts) and the capacity a tenant sees of it (worker-capacity.ts), and each queue's
// starts and waits per minute for the Queues page's charts (queue-activity.ts). Starting a job is the job machine's (../job-machine/start.ts); no other room decides which
// job runs next. What holds a due job back is written once, as the stored functions `conveyor_hold` composes
// (packages/db/sql/functions/conveyor_hold.sql, docs/reference/flow-control.md#why-a-job-waits): the dispatcher's limits and
// candidates, the claims, `waiting_for`, the backlog gauges and GET /queues all ask them.
export * from "./dispatch";
export * from "./flow-control";
export * from "./backlog";
export * from "./pressure";
export * from "./workers";
export * from "./worker-capacity";
export * from "./queue-activity";
export * from "./protocol-workers";
