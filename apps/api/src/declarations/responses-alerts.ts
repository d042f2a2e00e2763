// Response bodies of alert rules and alerts (docs/reference/time.md#alerts), spread into responseSchemas.
import Joi from "joi";
import { ALERT_CONDITION_KINDS } from "@conveyor/contracts";
import { id, timestamp } from "./responses-fields";

export const alertsSchemas = {
  AlertRule: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    condition: Joi.object({
      kind: Joi.string()
        .valid(...ALERT_CONDITION_KINDS)
        .required(),
    })
      .unknown(true)
      .required()
      .description("What it watches, as saved."),
    channels: Joi.array()
      .items(Joi.object({ kind: Joi.string().valid("chat", "email", "webhook").required(), url: Joi.string(), to: Joi.string() }))
      .required()
      .description("Whom it tells. A chat URL is shown by its origin only: its path is the credential."),
    window_seconds: Joi.number().integer().required().description("How long the condition must hold (or be clear) before it fires (or resolves)."),
    silenced_until: timestamp().allow(null).required().description("No notification before then; alerts are still recorded."),
    state: Joi.string().valid("ok", "firing").required(),
    observation: Joi.string().allow(null).required().description("What the last evaluation saw, in words."),
    evaluated_at: timestamp().allow(null).required(),
    created_at: timestamp().required(),
    updated_at: timestamp().required(),
  }),
  Alert: Joi.object({
    id: id().required(),
    rule_id: id().required(),
    rule_name: Joi.string().required(),
    status: Joi.string().valid("firing", "resolved").required(),
    summary: Joi.string().required().description("The rule, its condition and what was seen — the words of the notification."),
    silenced: Joi.boolean().required().description("Fired while the rule was silenced: nobody was told."),
    fired_at: timestamp().required(),
    resolved_at: timestamp().allow(null).required(),
  }),
} satisfies Record<string, Joi.Schema>;
