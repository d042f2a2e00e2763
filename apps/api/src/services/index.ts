// The services: one file per resource (jobs and their reads, batches, steering, schedules, flow control, webhook
// endpoints, team, invites, API keys, sessions, single sign-on, usage, waitpoints, saved views, workers, …), each an
// `async function name(options, deps)` doing the work behind its endpoints, with no HTTP in it. What they stand on
// is infrastructure/.
export {};
