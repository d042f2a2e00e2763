// Response bodies of accounts and access (docs/reference/tenants.md#authentication, docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#the-console): sign-up and login, the caller, API keys, members,
// invites and sessions. Spread into responseSchemas; the audit log and SSO are in responses-audit-sso.ts.
import Joi from "joi";
import { email, id, role, timestamp } from "./responses-fields";

const user = Joi.object({ id: id().required(), email: email().required() });
const userWithRole = user.keys({ role: role().required() });
const org = Joi.object({ id: id().required(), name: Joi.string().required() });

export const accountsSchemas = {
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
    role: Joi.string()
      .valid("member", "worker")
      .required()
      .description("member: the job endpoints, as a member; worker: the worker protocol only (docs/reference/lifecycle.md#your-own-workers)."),
    created_by: id().required().description("The id of the person who created it."),
    created_by_email: email().required().description("Their e-mail address."),
    created_at: timestamp().required(),
    last_used_at: timestamp().allow(null).required(),
  }),
  CreatedApiKey: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    prefix: Joi.string().required(),
    role: Joi.string()
      .valid("member", "worker")
      .required()
      .description("member: the job endpoints, as a member; worker: the worker protocol only (docs/reference/lifecycle.md#your-own-workers)."),
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
  InviteInfo: Joi.object({
    email: email().required(),
    org_name: Joi.string().required(),
    role: role().required().description("The role the invite offers."),
    expires_at: timestamp().required(),
  }),
  AcceptedInvite: Joi.object({
    token: Joi.string().required(),
    user: userWithRole.required(),
    org: org.required().description("The organization joined (the token's scope)."),
  }),
  Session: Joi.object({
    user: user.required(),
    org: org.required().description("The organization the session acts in."),
    role: role().required().description("The user's role there, read on every request."),
    orgs: Joi.array()
      .items(org.keys({ role: role().required() }))
      .required()
      .description("Every organization of the user, oldest membership first: what POST /auth/session/org can switch to."),
    csrf_token: Joi.string()
      .required()
      .description("Send it as X-CSRF-Token with every POST, PATCH, PUT and DELETE made with the session cookie. It is not the session token."),
  }),
  JobElsewhere: Joi.object({
    orgs: Joi.array()
      .items(org.keys({ role: role().required() }))
      .required()
      .description("The session's other organizations that have a job with this id (at most one), and that it can switch to."),
  }),
  PendingInvite: Joi.object({
    id: id().required(),
    email: email().required(),
    role: role().required(),
    expires_at: timestamp().required(),
    invited_by: id().required().description("The user id of the member who sent it."),
    created_at: timestamp().required(),
  }),
} satisfies Record<string, Joi.Schema>;
