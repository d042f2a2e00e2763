// Response bodies of the Workers view (issue 38, GET /workers), spread into responseSchemas.
import Joi from "joi";
import { count, id, timestamp } from "./responses-fields";

export const workerSchemas = {
  Worker: Joi.object({
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
      .items(
        Joi.object({
          id: id().required(),
          type: Joi.string().required(),
          started_at: timestamp().allow(null).required().description("When its current attempt started."),
        }),
      )
      .required()
      .description("Your organization's jobs it was running at its last heartbeat (still processing), oldest start first."),
  }),
};
