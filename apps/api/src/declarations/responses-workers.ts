// Response bodies of the Workers view (issue 38, GET /workers), spread into responseSchemas.
import Joi from "joi";
import { count, id, timestamp } from "./responses-fields";

const runningJob = Joi.object({
  id: id().required(),
  type: Joi.string().required(),
  started_at: timestamp().allow(null).required().description("When its current attempt started."),
});

const workerCapacity = Joi.object({
  kind: Joi.string().valid("capacity").required(),
  type: Joi.string().required().description("A job type your organization used in the last 30 days or has a schedule for."),
  workers: count().required().description("Live deployment worker processes serving it (0: no worker serves it, its jobs wait)."),
  slots: count().required().description("Their slots for it: jobs of this type they can run at once."),
  jobs: Joi.array().items(runningJob).required().description("Your organization's jobs of this type running on them, oldest start first."),
}).description("The deployment's shared workers as a tenant sees them (docs/reference/time.md#alerts): capacity only, no host name, pid or version.");

const worker = Joi.object({
  kind: Joi.string()
    .valid("worker", "protocol")
    .required()
    .description(
      "worker: one of the deployment's worker processes; protocol: one of your organization's own workers, over the worker protocol (docs/reference/lifecycle.md#your-own-workers).",
    ),
  name: Joi.string().description("A protocol worker's name, as it gave it (also in host)."),
  id: id().required().description("The worker process' id in the registry (new at each start)."),
  host: Joi.string().required().description("The host (container or machine) name it runs on."),
  pid: Joi.number().integer().min(0).required().description("Its process id on that host."),
  version: Joi.string().required().description("Its Conveyor release."),
  node_version: Joi.string().required().description("The Node.js it runs on."),
  types: Joi.array().items(Joi.string()).required().description("The job types it serves."),
  concurrency: count().required().description("Jobs it runs at once per type (WORKER_CONCURRENCY)."),
  slots: count().required().description("Its slots in all: concurrency × the number of types."),
  busy_slots: count().required().description("Slots running a job at its last heartbeat, any organization's."),
  other_busy_slots: count()
    .required()
    .description("Of those, the slots running work that is not one of your jobs (other organizations', Conveyor's own): a count, never the jobs."),
  state: Joi.string()
    .valid("running", "gone")
    .required()
    .description("running, or gone: no heartbeat for three intervals (killed, or its host lost); its jobs are recovered by the other workers."),
  started_at: timestamp().required(),
  heartbeat_at: timestamp().required().description("Its last heartbeat (the database's clock)."),
  heartbeat_ms: count().required().description("How often it heartbeats (WORKER_HEARTBEAT_MS)."),
  jobs: Joi.array()
    .items(runningJob)
    .required()
    .description("Your organization's jobs it was running at its last heartbeat (still processing), oldest start first."),
});

export const workerSchemas = {
  WorkerListItem: Joi.alternatives()
    .try(worker, workerCapacity)
    .description("A worker process in full (kind: worker), or the deployment's shared workers as capacity for one type (kind: capacity)."),
  WorkerCapacity: workerCapacity,
  Worker: worker,
};
