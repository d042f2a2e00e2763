// Response bodies of the audit log and single sign-on (docs/reference/tenants.md#audit-log), spread into responseSchemas.
import Joi from "joi";
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES } from "@conveyor/contracts";
import { id, timestamp } from "./responses-fields";

const party = (what: string) =>
  Joi.object({
    type: Joi.string().required(),
    id: id().allow(null).required(),
    email: Joi.string().description(`The ${what}'s e-mail then, for a user or an invite.`),
    name: Joi.string().description(`The ${what}'s name then, for an API key, a schedule, a webhook endpoint (its description or host) or an organization.`),
  }).oxor("email", "name");

const change = Joi.object({ before: Joi.any().required(), after: Joi.any().required() }).description("The value before and after; null: unset, or absent.");

export const auditSsoSchemas = {
  AuditEntry: Joi.object({
    id: id().required(),
    time: timestamp().required(),
    actor: party("actor")
      .keys({
        type: Joi.string()
          .valid(...AUDIT_ACTOR_TYPES)
          .required(),
      })
      .required()
      .description("Who: a user (by token or console session), an API key, or Conveyor itself."),
    action: Joi.string()
      .valid(...AUDIT_ACTIONS)
      .required(),
    target: party("target").allow(null).required().description("What it was done to (a member, an invite, a key, a job…); null for a bulk action."),
    ip: Joi.string().allow(null).required().description("The client address, as TRUST_PROXY lets the API read it."),
    user_agent: Joi.string().allow(null).required(),
    request_id: Joi.string().allow(null).required().description("The request's X-Request-Id, to find it in the API's logs."),
    changes: Joi.object()
      .pattern(/^/, change)
      .allow(null)
      .required()
      .description("The fields changed, each with its value before and after. Never a secret, password, token, key or payload."),
    details: Joi.object()
      .unknown(true)
      .allow(null)
      .required()
      .description("What else says what happened, without being a change: a failed login's reason, a bulk action's filter and counts."),
  }),
  SsoSettings: Joi.object({
    issuer: Joi.string().uri().required().description("The provider's issuer; its discovery document is at ISSUER/.well-known/openid-configuration."),
    client_id: Joi.string().required(),
    client_secret_set: Joi.boolean().valid(true).required().description("The client secret is stored (encrypted); it is never shown again."),
    email_domains: Joi.array().items(Joi.string()).required().description("E-mail domains this provider signs in."),
    default_role: Joi.string().valid("member", "admin").required().description("The role of a member created by their first sign-in."),
    enforce: Joi.boolean()
      .required()
      .description("Members other than the owner must sign in through the provider (password login and API-key creation refused)."),
    redirect_uri: Joi.string().uri().required().description("Register this as the client's redirect URI at the provider."),
    updated_at: timestamp().required(),
  }),
} satisfies Record<string, Joi.ObjectSchema>;
