// Rate limits and queues (docs/reference/flow-control.md#flow-control). Reading them is for any credential of the organization (like GET /jobs/stats:
// a service may watch its queues); changing them is for owners and admins with a user token.
import Joi from "joi";
import { CONCURRENCY_LIMIT_MAX, RATE_LIMIT_MAX, RATE_LIMIT_NAME_PATTERN, RATE_LIMIT_PERIODS } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint } from "../declarations/endpoint";
import { notFound } from "../services/infrastructure/errors";
import { deleteRateLimit, listQueues, listRateLimits, putRateLimit, updateQueue, type QueueChange, type RateLimitInput } from "../services/flow-control";
import { rateLimitName } from "../declarations/job-fields";

const AT = "2026-11-21T09:30:00.000Z";
const limitExample = { name: "sms-provider", limit: 50, period: "second", used: 12, created_at: AT, updated_at: AT };
const queueExample = {
  type: "send_email",
  paused: false,
  concurrency_limit: null,
  rate_limit: "email-provider",
  due: 12,
  delayed: 3,
  running: 8,
  waiting_on_limits: 140,
  oldest_due_at: AT,
  started_last_minute: 240,
  p95_wait_ms: 850,
};

const nameParam = { description: "The rate limit's name: 1 to 100 of a-z, 0-9, _ . : -", schema: { type: "string", pattern: RATE_LIMIT_NAME_PATTERN.source } };
const typeParam = { description: "A job type your organization can use.", schema: { type: "string" } };

const limitBody = Joi.object<RateLimitInput>({
  limit: Joi.number().integer().min(1).max(RATE_LIMIT_MAX).required().description("Most starts per period."),
  period: Joi.string()
    .valid(...Object.keys(RATE_LIMIT_PERIODS))
    .required()
    .description("The window: second, minute or hour. No window of that length ever holds more than `limit` starts."),
});

const queueBody = Joi.object<QueueChange>({
  paused: Joi.boolean().description("Paused: none of your jobs of this type starts (running ones finish); resumed: they start in their order."),
  concurrency_limit: Joi.number()
    .integer()
    .min(1)
    .max(CONCURRENCY_LIMIT_MAX * 100)
    .allow(null)
    .description("Most of your jobs of this type running at once; null removes the cap (the deployment's ORG_CONCURRENCY_LIMIT applies)."),
  rate_limit: rateLimitName.allow(null).description("A rate limit every one of your jobs of this type starts under; null removes it."),
})
  .min(1)
  .messages({ "object.min": "give at least one of paused, concurrency_limit, rate_limit" });

export const flowControlEndpoints = [
  endpoint({
    method: "put",
    path: "/rate-limits/:name",
    operationId: "putRateLimit",
    tag: "Flow control",
    summary: "Create or change a rate limit",
    description:
      "Jobs that name it in `rate_limit` (and every job of a queue that names it) start at most `limit` per `period`, across every worker: " +
      "a sliding window, so no window of that length ever holds more. A job held back stays pending (`waiting_for: rate_limit`); it is never failed or retried for it.",
    access: "user",
    roles: ["owner", "admin"],
    params: { name: nameParam },
    body: { schema: limitBody, examples: { sms: { summary: "50 a second", value: { limit: 50, period: "second" } } } },
    responses: { 200: { description: "The rate limit.", json: { component: "RateLimit", example: limitExample } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, params, body }, deps) {
      const name = rateLimitName.validate(params.name);
      if (name.error) throw notFound("Rate limit");
      return { json: await putRateLimit({ caller, name: params.name, input: body }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/rate-limits",
    operationId: "listRateLimits",
    tag: "Flow control",
    summary: "List rate limits",
    description: "By name, each with the starts used in its current window.",
    access: "job",
    responses: { 200: { description: "The rate limits.", json: { component: "RateLimit", array: true, example: [limitExample] } } },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller }, deps) {
      return { json: await listRateLimits({ caller }, deps) };
    },
  }),
  endpoint({
    method: "delete",
    path: "/rate-limits/:name",
    operationId: "deleteRateLimit",
    tag: "Flow control",
    summary: "Delete a rate limit",
    description: "Jobs that name it start without it from then on.",
    access: "user",
    roles: ["owner", "admin"],
    params: { name: nameParam },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params }, deps) {
      await deleteRateLimit({ caller, name: params.name }, deps);
      return { status: 204 };
    },
  }),
  endpoint({
    method: "get",
    path: "/queues",
    operationId: "listQueues",
    tag: "Flow control",
    summary: "List queues",
    description:
      "Each job type your organization can use, with its settings and your jobs' counts: due (waiting for a worker), delayed (due later), running, " +
      "waiting on limits (due but held by a pause, a rate limit, a concurrency key or the cap), when the oldest due job fell due, " +
      "the live start rate (starts in the last minute) and the p95 wait from due to start over the last 15 minutes.",
    access: "job",
    responses: { 200: { description: "The queues, by type.", json: { component: "Queue", array: true, example: [queueExample] } } },
    errors: [...AUTHENTICATED_ERRORS],
    async handle({ caller }, deps) {
      return { json: await listQueues({ caller }, deps) };
    },
  }),
  endpoint({
    method: "patch",
    path: "/queues/:type",
    operationId: "updateQueue",
    tag: "Flow control",
    summary: "Pause, resume or limit a queue",
    description: "Your organization's settings of one job type's queue; other organizations' jobs of the type are not affected.",
    access: "user",
    roles: ["owner", "admin"],
    params: { type: typeParam },
    body: {
      schema: queueBody,
      examples: {
        pause: { summary: "Pause", value: { paused: true } },
        limit: { summary: "Cap and rate-limit", value: { concurrency_limit: 5, rate_limit: "email-provider" } },
      },
    },
    responses: { 200: { description: "The queue, as it is now.", json: { component: "Queue", example: { ...queueExample, paused: true } } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, body }, deps) {
      return { json: await updateQueue({ caller, type: params.type, change: body }, deps) };
    },
  }),
];
