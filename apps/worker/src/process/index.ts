// The worker process itself: worker-runtime.ts assembles it for the job types it serves (the executor per type, and
// the leader's dispatcher and duties when it leads); the health and metrics server on WORKER_METRICS_PORT and the
// metrics; this worker's row in the worker registry; the operator's plugins; and which built-in types this machine
// cannot run.
export {};
