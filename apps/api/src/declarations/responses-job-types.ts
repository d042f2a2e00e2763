// Response bodies of organization job types and the worker protocol (docs/reference/lifecycle.md#your-own-workers), spread into responseSchemas.
import Joi from "joi";
import { anyObject, count, id, timestamp } from "./responses-fields";

export const jobTypeSchemas = {
  JobType: Joi.object({
    name: Joi.string().required().description("The type's name, as POST /jobs takes it."),
    description: Joi.string().allow(null).required(),
    payload_schema: anyObject().required().description("The JSON Schema (draft 2020-12) every payload of the type is validated against."),
    default_max_retries: count().allow(null).required().description("Retries a job of the type gets when it asks for none (null: 0)."),
    default_timeout_ms: count().allow(null).required().description("A job's timeout_ms when it gives none (null: the deployment's default)."),
    created_at: timestamp().required(),
    updated_at: timestamp().required(),
  }),
  LeasedJob: Joi.object({
    id: id().required(),
    type: Joi.string().required(),
    payload: anyObject().required(),
    attempt: Joi.number().integer().min(1).required().description("This attempt's number (1 for the first)."),
    max_retries: count().required(),
    lease_token: Joi.string().required().description("Names this lease on every call about the job; a lapsed or superseded token answers 409."),
    lease_expires_at: timestamp().required().description("When the lease lapses unless a heartbeat extends it."),
    steps: Joi.array()
      .items(
        Joi.object({
          name: Joi.string().required(),
          kind: Joi.string().valid("step", "sleep", "wait").required(),
          status: Joi.string().valid("succeeded", "sleeping", "waiting", "completed", "failed").required(),
          result: Joi.any().description("A step's stored result, or a wait's waitpoint data."),
          waitpoint_id: id().allow(null),
        }),
      )
      .required()
      .description("Steps earlier attempts recorded: replay them instead of running them again."),
    dependencies: Joi.array()
      .items(Joi.object({ id: id().required(), type: Joi.string().required(), status: Joi.string().required(), result: Joi.any() }))
      .required()
      .description("The jobs and waitpoints it depends on, with their results."),
  }),
  LeaseExtended: Joi.object({
    lease_expires_at: timestamp().required(),
    cancel_requested: Joi.boolean().required().description("Someone asked to cancel the job: stop, and report it with /fail."),
  }),
  StepRecorded: Joi.object({
    name: Joi.string().required(),
    recorded: Joi.boolean().required().description("false: a step of that name was stored before; `result` is the stored one."),
    result: Joi.any(),
  }),
  JobOutcome: Joi.object({ status: Joi.string().valid("pending", "done", "failed", "cancelled").required().description("The job's status after the report.") }),
  OutcomeResults: Joi.object({
    results: Joi.array()
      .items(
        Joi.object({
          job_id: id().required(),
          status: Joi.string()
            .valid("pending", "done", "failed", "cancelled")
            .allow(null)
            .required()
            .description("The job's status after the report (null: lease lost)."),
          lease_lost: Joi.boolean().required().description("true: the lease was not live (lapsed, superseded, ended); nothing was recorded for this job."),
        }),
      )
      .required(),
  }),
  WaitOutcome: Joi.object({
    outcome: Joi.string()
      .valid("suspended", "ended")
      .required()
      .description("suspended: the attempt is over, end it; ended: the waitpoint was already over, go on."),
    waitpoint_id: id().description("The waitpoint of a wait."),
    status: Joi.string().description("The waitpoint's status when it had already ended."),
    data: Joi.any().description("Its data when it had completed."),
    wake_at: timestamp().description("A sleep's wake time."),
  }),
};
