// Response bodies, in joi like the request bodies, so one converter documents both and the OpenAPI test can
// check real responses against what the document promises (joi refuses unknown keys: a new field fails it). Each
// area's bodies are in a responses-<area>.ts file (jobs, live, flow, schedules, waitpoints, events, accounts,
// audit-sso, usage, workers, views) that this one spreads; the fields they share are written once, in responses-fields.ts.
import Joi from "joi";
import { ERROR_CODES } from "../services/infrastructure/errors";
import { accountsSchemas } from "./responses-accounts";
import { alertsSchemas } from "./responses-alerts";
import { auditSsoSchemas } from "./responses-audit-sso";
import { eventsSchemas } from "./responses-events";
import { flowSchemas } from "./responses-flow";
import { jobsSchemas } from "./responses-jobs";
import { jobTypeSchemas } from "./responses-job-types";
import { liveSchemas } from "./responses-live";
import { schedulesSchemas } from "./responses-schedules";
import { usageSchemas } from "./responses-usage";
import { waitpointsSchemas } from "./responses-waitpoints";
import { viewSchemas } from "./responses-views";
import { workerSchemas } from "./responses-workers";

/** Every JSON response body, by its component name in the document. */
export const responseSchemas = {
  Error: Joi.object({
    error: Joi.object({
      code: Joi.string()
        .valid(...ERROR_CODES)
        .required(),
      message: Joi.string().required().description("One sentence for people; never a stack trace."),
      details: Joi.array()
        .items(Joi.object({ path: Joi.string().required(), message: Joi.string().required() }))
        .description("Which fields were wrong, e.g. payload.to."),
    }).required(),
  }).description("The body of every refusal (docs/reference/http.md#errors)."),
  Health: Joi.object({ status: Joi.string().valid("ok").required() }),
  Ready: Joi.object({
    status: Joi.string().valid("ready").required(),
    checks: Joi.object({
      postgres: Joi.string().valid("ok").required(),
      redis: Joi.string().valid("ok").required(),
      redis_maxmemory_policy: Joi.string().allow(null).required(),
    }).required(),
  }),
  ...jobsSchemas,
  ...liveSchemas,
  ...flowSchemas,
  ...schedulesSchemas,
  ...waitpointsSchemas,
  ...eventsSchemas,
  ...accountsSchemas,
  ...auditSsoSchemas,
  ...usageSchemas,
  ...workerSchemas,
  ...alertsSchemas,
  ...jobTypeSchemas,
  ...viewSchemas,
};

export type ResponseSchemaName = keyof typeof responseSchemas;
