// A job's states and the transitions between them, written down once (docs/reference/lifecycle.md#lifecycle, docs/reference/lifecycle.md#steering, docs/reference/events.md#events, docs/reference/lifecycle.md#state-machine). What a user sees is
// `status`; how the engine runs a job (its row in the dispatcher's queue, handed over or not) is packages/db's
// business. Every transition is one function of packages/db/src/job-machine, which writes the status, the queue row,
// the event and the notification together; the event a transition announces is named here and nowhere else.
//
//   pending ──started──▶ processing ──succeeded──▶ done
//      ▲                    │  │ └────failed─────▶ failed
//      └──retry scheduled───┘  └──cancelled──────▶ cancelled
//      └──released (shutdown, not the job's fault)
//   pending ──cancelled──▶ cancelled      (never started)
//
// Who moves a job:
//   created          the API (POST /jobs, batch, replay), the scheduler, the webhook relay (delivery jobs)
//   handed over      the dispatcher (queue row only: the job stays pending until a worker starts it)
//   started          a worker, when BullMQ delivers the job (also taking over an attempt that was lost; a job
//                    lost more than MAX_INTERRUPTIONS times is failed instead)
//   retry scheduled  a worker, when an attempt fails with retries left
//   released         a worker shutting down past its grace period (no retry consumed)
//   succeeded/failed a worker, under the attempt's fence
//   cancelled        the API (a pending job at once; a processing one once its attempt stops), a worker
//   result amended   a provider's callback after the job finished (M-Pesa's result.callback)
//   debounced        the API: a debounced job not yet handed over takes a newer post's payload and start time
//   brought forward  the API: a pending job due later (run_at, or a retry's wait) is due now at a person's request
//   progress/output  a worker, while an attempt runs (no status change; job-machine/live.ts): job.progress, job.output
//   waiting / released / cancelled for a dependency (docs/reference/lifecycle.md#dependencies)
//                    created with dependencies that are not final, a job waits without a queue row; the transition
//                    that ends its last dependency releases it (queue row), and one that ends a dependency failed or
//                    cancelled cancels it (dependency_failed) — in that transition's transaction (job-machine/dependencies.ts)
//   step succeeded / suspended for a sleep or a wait / sleep or wait over (docs/reference/lifecycle.md#waitpoints-and-durable-steps)
//                    a worker, under the attempt's fence: a ctx.step's result stored; a ctx.sleep or ctx.waitFor ends
//                    the attempt with no retry spent (pending, due at the wake time, or waiting on the waitpoint like a
//                    dependency, announced as job.retrying) — job-machine/steps.ts and suspend.ts
//   waitpoint ended  the API (completed, cancelled), the leader's expiry loop (expired): settles the jobs waiting on it

/** The five statuses a job can have; the list filter accepts exactly these. */
export const JOB_STATUSES = ["pending", "processing", "done", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses a job never leaves. */
export const FINAL_STATUSES = ["done", "failed", "cancelled"] as const satisfies readonly JobStatus[];
export type FinalStatus = (typeof FINAL_STATUSES)[number];

/** Statuses of a job that still has work ahead of it (it holds a row in the dispatcher's queue). */
export const LIVE_STATUSES = ["pending", "processing"] as const satisfies readonly JobStatus[];
export type LiveStatus = (typeof LIVE_STATUSES)[number];

/**
 * Lost attempts (the worker died: crash, SIGKILL, lock expired) tolerated per job. Taking over a job lost once more
 * than this fails it instead of starting it again: it probably crashes its worker (docs/reference/robustness.md#r4).
 */
export const MAX_INTERRUPTIONS = 2;

/** The event each transition announces (docs/reference/events.md#events). A transition without an entry announces nothing. */
export const TRANSITION_EVENTS = {
  created: "job.created",
  started: "job.started",
  retryScheduled: "job.retrying",
  released: "job.retrying",
  succeeded: "job.succeeded",
  failed: "job.failed",
  cancelled: "job.cancelled",
  resultAmended: "job.updated",
  debounced: "job.updated",
  broughtForward: "job.updated",
} as const;

/**
 * Events of a running job that change no status (docs/reference/events.md#progress-and-live-results): its progress and its output. Written by
 * job-machine/live.ts; a webhook endpoint gets them only when it names them ("*" leaves them out).
 */
export const LIVE_EVENTS = { progress: "job.progress", output: "job.output" } as const;
export const LIVE_EVENT_TYPES = Object.values(LIVE_EVENTS);

/** A waitpoint's events (docs/reference/lifecycle.md#waitpoints-and-durable-steps): its `job_id` is the waitpoint's id, its `data` the waitpoint. */
export const WAITPOINT_EVENT_TYPES = ["waitpoint.completed", "waitpoint.expired", "waitpoint.cancelled"] as const;
export type WaitpointEventType = (typeof WAITPOINT_EVENT_TYPES)[number];

/** Every event type, in lifecycle order, then the live ones and the waitpoints'. */
export const EVENT_TYPES = [
  "job.created",
  "job.started",
  "job.retrying",
  "job.succeeded",
  "job.failed",
  "job.cancelled",
  "job.updated",
  LIVE_EVENTS.progress,
  LIVE_EVENTS.output,
  ...WAITPOINT_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The event a job's move into a status announces: a retry or a release (back to pending) is `job.retrying`. */
export const EVENT_OF_STATUS = {
  pending: TRANSITION_EVENTS.retryScheduled,
  processing: TRANSITION_EVENTS.started,
  done: TRANSITION_EVENTS.succeeded,
  failed: TRANSITION_EVENTS.failed,
  cancelled: TRANSITION_EVENTS.cancelled,
} as const satisfies Record<JobStatus, EventType>;

/** The events after which a job never changes status again (a job's event stream ends with one). */
export const FINAL_EVENT_TYPES = FINAL_STATUSES.map((status) => EVENT_OF_STATUS[status]);
