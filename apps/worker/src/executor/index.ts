// The executor, on every worker replica: one attempt of one job, from its envelope's delivery to its recorded
// outcome. envelopes.ts is the worker's side of an envelope (claim its jobs in one statement, run them within the
// slots, settle it); attempt.ts wraps one attempt (with its span, attempt-span.ts) around the handler; the bookkeeper
// batches the attempts' Postgres writes; cancellations.ts tells a running attempt its job was cancelled; live.ts is
// ctx.progress and ctx.output; steps.ts is ctx.step, ctx.sleep and ctx.waitFor; outcome.ts says what a failure means.
export {};
