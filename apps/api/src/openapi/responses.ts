// Response bodies, in joi like the request bodies, so one converter documents both and the OpenAPI test can
// check real responses against what the document promises (joi refuses unknown keys: a new field fails it).
import Joi from "joi";
import { JOB_STATUSES, ROLES } from "@conveyor/contracts";
import { ERROR_STATUS } from "../http/errors";

const id = () => Joi.string().guid().description("UUID v7.");
const timestamp = () => Joi.string().isoDate().description("ISO 8601 UTC with milliseconds and Z.");
const email = () => Joi.string().email({ tlds: { allow: false } });
const role = () => Joi.string().valid(...ROLES);
const jobStatus = () => Joi.string().valid(...JOB_STATUSES);
const anyObject = () => Joi.object().unknown(true);

const jobListItem = Joi.object({
  id: id().required(),
  type: Joi.string().required(),
  status: jobStatus().required(),
  retries: Joi.number().integer().min(0).required().description("Retries consumed so far (attempt n runs with retries = n − 1)."),
  max_retries: Joi.number().integer().min(0).required(),
  created_at: timestamp().required(),
  updated_at: timestamp().required(),
  run_at: timestamp().allow(null).required().description("When it is (or its next attempt is) due; null: as soon as it was created."),
  priority: Joi.number().integer().min(1).max(10).required().description("1 to 10; among due jobs of one type, higher runs first."),
  replay_of: id().allow(null).required().description("The job this one replays, or null."),
  schedule_id: id().allow(null).required().description("The schedule that made this job, or null."),
  cancel_requested_at: timestamp().allow(null).required().description("When a cancellation was asked for while the job was processing, or null."),
});

const user = Joi.object({ id: id().required(), email: email().required() });
const userWithRole = user.keys({ role: role().required() });
const org = Joi.object({ id: id().required(), name: Joi.string().required() });

/** Every JSON response body, by its component name in the document. */
export const responseSchemas = {
  Error: Joi.object({
    error: Joi.object({
      code: Joi.string()
        .valid(...Object.keys(ERROR_STATUS))
        .required(),
      message: Joi.string().required().description("One sentence for people; never a stack trace."),
      details: Joi.array()
        .items(Joi.object({ path: Joi.string().required(), message: Joi.string().required() }))
        .description("Which fields were wrong, e.g. payload.to."),
    }).required(),
  }).description("The body of every refusal (SPEC §2)."),
  JobAccepted: Joi.object({ id: id().required(), status: jobStatus().required() }),
  JobListItem: jobListItem,
  Job: jobListItem.keys({
    payload: anyObject().required(),
    result: anyObject().allow(null).required().description("What the handler returned, or null."),
    error: Joi.string().allow(null).required().description("The last error message, or null."),
  }),
  JobLogEntry: Joi.object({
    attempt: Joi.number().integer().min(1).required(),
    message: Joi.string().allow("").required(),
    level: Joi.string().valid("info", "warn", "error").required(),
    timestamp: timestamp().required(),
  }),
  SignupResult: Joi.object({
    token: Joi.string().required(),
    user: user.keys({ role: Joi.string().valid("owner").required() }).required(),
    org: org.required(),
  }),
  LoginResult: Joi.object({
    token: Joi.string().required().description("A JWT scoped to org_id, or to the user's oldest membership."),
    user: userWithRole.required(),
    orgs: Joi.array()
      .items(org.keys({ role: role().required() }))
      .required(),
  }),
  Me: Joi.object({ user: user.required(), org: org.required(), role: role().required() }),
  ApiKey: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    prefix: Joi.string().required().description("The key's first 8 characters, to recognise it."),
    created_by: id().required(),
    created_at: timestamp().required(),
    last_used_at: timestamp().allow(null).required(),
  }),
  CreatedApiKey: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    prefix: Joi.string().required(),
    key: Joi.string()
      .pattern(/^cvk_[0-9A-Za-z]+$/)
      .required()
      .description("The key itself: shown only in this response."),
    created_at: timestamp().required(),
  }),
  Member: Joi.object({ id: id().required(), email: email().required(), role: role().required(), joined_at: timestamp().required() }),
  Invite: Joi.object({
    invite_url: Joi.string().uri().required().description("PUBLIC_URL/accept-invite?token=…, single use, for the invitee."),
    email: email().required(),
    expires_at: timestamp().required(),
  }),
  InviteInfo: Joi.object({ email: email().required(), org_name: Joi.string().required(), expires_at: timestamp().required() }),
  AcceptedInvite: Joi.object({ token: Joi.string().required(), user: userWithRole.required() }),
  Health: Joi.object({ status: Joi.string().valid("ok").required() }),
  Ready: Joi.object({
    status: Joi.string().valid("ready").required(),
    checks: Joi.object({
      postgres: Joi.string().valid("ok").required(),
      redis: Joi.string().valid("ok").required(),
      redis_maxmemory_policy: Joi.string().allow(null).required(),
    }).required(),
  }),
  CallbackAccepted: Joi.object({ ResultCode: Joi.number().valid(0).required(), ResultDesc: Joi.string().required() }),
} satisfies Record<string, Joi.ObjectSchema>;

export type ResponseSchemaName = keyof typeof responseSchemas;
