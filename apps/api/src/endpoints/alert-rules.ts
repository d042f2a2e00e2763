// Alert rules and alerts (docs/reference/time.md#alerts): owners and admins make, change, silence and delete rules; any member reads the
// alerts they fired (the console shows them). Evaluated by the workers' leader every ALERT_EVALUATION_MS.
import Joi from "joi";
import {
  ALERT_CHANNELS_MAX,
  ALERT_QUOTAS,
  ALERT_WINDOW_DEFAULT_SECONDS,
  ALERT_WINDOW_MAX_SECONDS,
  ALERT_WINDOW_MIN_SECONDS,
  TYPE_NAME_PATTERN,
  type AlertChannel,
  type AlertCondition,
} from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import {
  createAlertRule,
  deleteAlertRule,
  getAlertRule,
  listAlertRules,
  listAlerts,
  updateAlertRule,
  type AlertListQuery,
  type AlertRuleInput,
  type AlertRulePatch,
} from "../services/alert-rules";

const AT = "2026-12-06T10:00:00.000Z";
const RULE_ID = "019af0c1-2a3b-7c4d-8e5f-60718293a4b5";

const typeName = Joi.string().pattern(TYPE_NAME_PATTERN).max(100);
const percent = Joi.number().min(0).max(100);
const uuid = Joi.string().guid();
const condition = Joi.alternatives()
  .conditional(".kind", {
    switch: [
      {
        is: "failure_rate",
        then: Joi.object({
          kind: Joi.string(),
          type: typeName,
          threshold_percent: percent.required(),
          min_jobs: Joi.number().integer().min(1).max(1_000_000).default(10),
        }),
      },
      {
        is: "queue_wait",
        then: Joi.object({
          kind: Joi.string(),
          type: typeName.required(),
          threshold_seconds: Joi.number()
            .integer()
            .min(1)
            .max(30 * 86_400)
            .required(),
        }),
      },
      { is: "no_worker", then: Joi.object({ kind: Joi.string(), type: typeName.required() }) },
      {
        is: "webhook_failing",
        then: Joi.object({ kind: Joi.string(), endpoint_id: uuid.required(), consecutive: Joi.number().integer().min(1).max(1000).default(5) }),
      },
      { is: "schedule_missed", then: Joi.object({ kind: Joi.string(), schedule_id: uuid.required() }) },
      {
        is: "quota",
        then: Joi.object({
          kind: Joi.string(),
          quota: Joi.string()
            .valid(...ALERT_QUOTAS)
            .required(),
          threshold_percent: percent.required(),
        }),
      },
    ],
    otherwise: Joi.object({
      kind: Joi.string().valid("failure_rate", "queue_wait", "no_worker", "webhook_failing", "schedule_missed", "quota").required(),
    }).unknown(true),
  })
  .description(
    "What to watch: failure_rate {type?, threshold_percent, min_jobs} over the window; queue_wait {type, threshold_seconds} (the oldest due job); " +
      "no_worker {type} (due jobs no live worker serves); webhook_failing {endpoint_id, consecutive}; schedule_missed {schedule_id}; " +
      "quota {quota, threshold_percent}.",
  );
const channel = Joi.alternatives()
  .conditional(".kind", {
    switch: [
      {
        is: "chat",
        then: Joi.object({
          kind: Joi.string(),
          url: Joi.string()
            .uri({ scheme: ["http", "https"] })
            .max(2000)
            .required(),
        }),
      },
      { is: "email", then: Joi.object({ kind: Joi.string(), to: Joi.string().email({ tlds: false }).max(320).required() }) },
      { is: "webhook", then: Joi.object({ kind: Joi.string() }) },
    ],
    otherwise: Joi.object({ kind: Joi.string().valid("chat", "email", "webhook").required() }).unknown(true),
  })
  .description(
    "chat {url}: a Slack-format incoming webhook; email {to}: through the deployment's e-mail provider; webhook: the organization's endpoints, signed.",
  );
const name = Joi.string().trim().min(1).max(200);
const channels = Joi.array().items(channel).min(1).max(ALERT_CHANNELS_MAX);
const windowSeconds = Joi.number().integer().min(ALERT_WINDOW_MIN_SECONDS).max(ALERT_WINDOW_MAX_SECONDS);

const createBody = Joi.object<AlertRuleInput>({
  name: name.required(),
  condition: condition.required(),
  channels: channels.required(),
  window_seconds: windowSeconds.default(ALERT_WINDOW_DEFAULT_SECONDS),
});
const patchBody = Joi.object<AlertRulePatch & { silence_seconds?: number }>({
  name,
  condition,
  channels,
  window_seconds: windowSeconds,
  silence_seconds: Joi.number()
    .integer()
    .min(0)
    .max(30 * 86_400)
    .description("Silence the rule for this long from now; 0 lifts a silence."),
})
  .min(1)
  .messages({ "object.min": "must change at least one field" });
const alertQuery = Joi.object<AlertListQuery>({
  status: Joi.string().valid("firing", "resolved"),
  rule_id: uuid,
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(64),
});

const ruleExample = {
  id: RULE_ID,
  name: "Webhooks failing",
  condition: { kind: "failure_rate", type: "webhook", threshold_percent: 20, min_jobs: 10 } as AlertCondition,
  channels: [{ kind: "chat", url: "https://hooks.slack.com/…" }, { kind: "webhook" }] as AlertChannel[],
  window_seconds: 300,
  silenced_until: null,
  state: "ok",
  observation: "1 of 40 webhook jobs finished in the window failed (2.5 %)",
  evaluated_at: AT,
  created_at: AT,
  updated_at: AT,
};
const alertExample = {
  id: "019af0c9-0000-7c4d-8e5f-60718293a4b5",
  rule_id: RULE_ID,
  rule_name: "Webhooks failing",
  status: "resolved",
  summary:
    "Webhooks failing: failure rate of webhook jobs at or above 20 % over 5 min (at least 10 finished) — 12 of 30 webhook jobs finished in the window failed (40 %)",
  silenced: false,
  fired_at: AT,
  resolved_at: "2026-12-06T10:20:00.000Z",
};

export const alertEndpoints = [
  endpoint({
    method: "post",
    path: "/alert-rules",
    operationId: "createAlertRule",
    tag: "Alerts",
    summary: "Make an alert rule",
    description:
      "The workers' leader evaluates the rule every ALERT_EVALUATION_MS (10 s). It fires once its condition has held for `window_seconds` " +
      "without a break, and resolves once it has been clear as long; each channel is told once when it fires and once when it resolves.",
    access: "user",
    roles: ["owner", "admin"],
    body: {
      schema: createBody,
      examples: {
        failing: {
          summary: "Tell Slack when a fifth of the webhooks fail",
          value: {
            name: "Webhooks failing",
            condition: { kind: "failure_rate", type: "webhook", threshold_percent: 20, min_jobs: 10 },
            channels: [{ kind: "chat", url: "https://hooks.slack.com/services/T000/B000/XXXX" }],
          },
        },
      },
    },
    responses: { 201: { description: "The rule (a chat URL shown by its origin).", json: { component: "AlertRule", example: ruleExample } } },
    errors: [...BODY_ERRORS, 401, 403, 503],
    async handle({ caller, body, req }, deps) {
      const rule = await createAlertRule({ caller, input: body }, deps);
      req.log.info("alert rule created", { alertRuleId: rule.id });
      return { status: 201, json: rule };
    },
  }),
  endpoint({
    method: "get",
    path: "/alert-rules",
    operationId: "listAlertRules",
    tag: "Alerts",
    summary: "List alert rules",
    description: "Newest first, each with its state and what its last evaluation saw.",
    access: "user",
    roles: ["owner", "admin"],
    responses: { 200: { description: "The rules.", json: { component: "AlertRule", array: true, example: [ruleExample] } } },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listAlertRules({ caller }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/alert-rules/:id",
    operationId: "getAlertRule",
    tag: "Alerts",
    summary: "Get an alert rule",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("alert rule") },
    responses: { 200: { description: "The rule.", json: { component: "AlertRule", example: ruleExample } } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params }, deps) {
      return { json: await getAlertRule({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "patch",
    path: "/alert-rules/:id",
    operationId: "updateAlertRule",
    tag: "Alerts",
    summary: "Change or silence an alert rule",
    description:
      "Any of name, condition, channels (replaced whole) and window_seconds; `silence_seconds` silences it for that long from now " +
      "(0 lifts the silence): a silenced rule is still evaluated and its alerts recorded, but nobody is told. A new condition or window starts its observation over.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("alert rule") },
    body: { schema: patchBody, examples: { silence: { summary: "Silence it for an hour", value: { silence_seconds: 3600 } } } },
    responses: { 200: { description: "The rule as it is now.", json: { component: "AlertRule", example: ruleExample } } },
    errors: [...BODY_ERRORS, 401, 403, 404, 503],
    async handle({ caller, params, body, req }, deps) {
      const rule = await updateAlertRule({ caller, id: params.id, patch: body }, deps);
      req.log.info("alert rule changed", { alertRuleId: rule.id, fields: Object.keys(body) });
      return { json: rule };
    },
  }),
  endpoint({
    method: "delete",
    path: "/alert-rules/:id",
    operationId: "deleteAlertRule",
    tag: "Alerts",
    summary: "Delete an alert rule",
    description: "Its alerts go with it.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("alert rule") },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      await deleteAlertRule({ caller, id: params.id }, deps);
      req.log.info("alert rule deleted", { alertRuleId: params.id });
      return { status: 204 };
    },
  }),
  endpoint({
    method: "get",
    path: "/alerts",
    operationId: "listAlerts",
    tag: "Alerts",
    summary: "List fired and resolved alerts",
    description: "Newest first; `status` firing or resolved; keyset pages with a `Link` header. Any member of the organization.",
    access: "user",
    query: alertQuery,
    queryDescriptions: { status: "firing or resolved.", rule_id: "One rule's alerts.", limit: "Page size (default 100).", cursor: "From the Link header." },
    responses: {
      200: {
        description: "The alerts.",
        json: { component: "Alert", array: true, example: [alertExample] },
        headers: { Link: { description: 'While more remain: `<…/alerts?…&cursor=…>; rel="next"`.', schema: { type: "string" } } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS],
    async handle({ caller, query }, deps) {
      const page = await listAlerts({ caller, query }, deps);
      return { json: page.items, headers: page.next ? { Link: `<${deps.config.PUBLIC_URL}/alerts?${page.next}>; rel="next"` } : undefined };
    },
  }),
];
