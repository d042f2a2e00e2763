// Response bodies of schedules (docs/reference/time.md#time-priority-and-fairness). Spread into responseSchemas.
import Joi from "joi";
import { anyObject, id, timestamp } from "./responses-fields";

export const schedulesSchemas = {
  Schedule: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    cron: Joi.string().required().description("Five fields, minute hour day-of-month month day-of-week, read in `timezone`."),
    timezone: Joi.string().required().description("IANA time zone name, as given (default UTC)."),
    job: Joi.object({
      type: Joi.string().required(),
      payload: anyObject().required(),
      max_retries: Joi.number().integer().min(0).required(),
      priority: Joi.number().integer().min(1).max(10).required(),
      concurrency_key: Joi.string(),
      concurrency_limit: Joi.number().integer(),
      rate_limit: Joi.string(),
      timeout_ms: Joi.number().integer(),
    })
      .required()
      .description("The job each tick creates, with defaults applied."),
    paused: Joi.boolean().required(),
    next_run_at: timestamp().allow(null).required().description("The next tick; null while paused."),
    last_run_at: timestamp().allow(null).required().description("The latest tick that created a job, or null."),
    overlap: Joi.string()
      .valid("allow", "skip", "buffer_one")
      .required()
      .description("While its last run is pending or running: allow (a run per tick anyway), skip (no new run), buffer_one (one tick held for when it ends)."),
    catch_up: Joi.string()
      .valid("none", "latest", "all")
      .required()
      .description("After downtime: none (missed ticks do not run), latest (one run for them), all (each within catch_up_window_seconds)."),
    catch_up_window_seconds: Joi.number().integer().allow(null).required().description("With catch_up all: how far back missed ticks still run; else null."),
    next_runs: Joi.array()
      .items(Joi.string().isoDate())
      .max(5)
      .required()
      .description("The next five run times, ISO 8601 in the schedule's zone with its offset (e.g. 2026-12-07T09:00:00.000+01:00); empty while paused."),
    created_at: timestamp().required(),
  }),
  ScheduleBackfill: Joi.object({
    created: Joi.number().integer().min(0).required().description("Runs this request made; the others had theirs already."),
    runs: Joi.array()
      .items(
        Joi.object({
          tick: timestamp().required(),
          job_id: id().required(),
          created: Joi.boolean().required().description("Made by this request (false: an earlier backfill or the ticker made it)."),
        }),
      )
      .required()
      .description("Every tick of the range, oldest first, with its job."),
  }),
} satisfies Record<string, Joi.Schema>;
