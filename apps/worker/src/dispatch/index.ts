// The dispatcher, the leader's main loop: hands due jobs from Postgres to BullMQ in envelopes (dispatcher.ts), sized
// from the live workers' free slots (capacity.ts), woken by the NOTIFYs of new work (dispatch-wakes.ts), each
// hand-over a span in its job's trace (hand-over-span.ts). redis-repair.ts is the one path that gives back to Redis
// the live jobs it lost, for the dispatcher and the reconciler.
export {};
