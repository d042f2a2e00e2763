// GET /usage (docs/reference/tenants.md#usage-quotas-and-backpressure): what the organization used, by UTC day or by job type; CSV with Accept: text/csv.
import Joi from "joi";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { getQuotas, getUsage, USAGE_MAX_DAYS, usageCsv, type UsageQuery } from "../services/usage";

const date = Joi.string()
  .pattern(/^\d{4}-\d{2}-\d{2}$/)
  .messages({ "string.pattern.base": "must be a date (YYYY-MM-DD)" });

const usageQuery = Joi.object<UsageQuery>({
  from: date,
  to: date,
  group_by: Joi.string().valid("day", "type").default("day").messages({ "any.only": "must be day or type" }),
});

const counts = { jobs_created: 120, attempts_started: 131, attempt_seconds: 42.517, webhook_deliveries: 12, payload_bytes: 20480 };

export const usageEndpoints = [
  endpoint({
    method: "get",
    path: "/usage",
    operationId: "getUsage",
    tag: "Usage",
    summary: "Usage by day or job type",
    description:
      "What the organization used from `from` to `to` (UTC dates, both included, at most " +
      `${USAGE_MAX_DAYS} days; default: the last 30 days to today): jobs created, attempts started, attempt seconds ` +
      "(from each attempt's start to its end), webhook deliveries attempted and payload bytes (of the jobs created, as " +
      "JSON text). Counted in the transactions that do the work, so exact after crashes and retries, and kept when " +
      "retention deletes the jobs. `group_by=day` answers every day of the range (zeros included), `group_by=type` the " +
      "types used in it. With `Accept: text/csv` the same rows as CSV. Owners and admins only.",
    access: "user",
    roles: ["owner", "admin"],
    query: usageQuery,
    queryDescriptions: {
      from: "First day (YYYY-MM-DD, UTC). Default: 29 days before `to`.",
      to: "Last day (YYYY-MM-DD, UTC). Default: today.",
      group_by: "`day` (default) or `type`.",
    },
    responses: {
      200: {
        description: "One row per day or per type.",
        json: {
          component: "UsageRow",
          array: true,
          example: [
            { day: "2026-11-27", ...counts },
            { day: "2026-11-28", jobs_created: 0, attempts_started: 0, attempt_seconds: 0, webhook_deliveries: 0, payload_bytes: 0 },
          ],
        },
        media: { types: ["text/csv"], schema: { type: "string", description: "A header line (day or type, then the five counts), one line per row." } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 403, 429],
    async handle({ caller, query, req, res }, deps) {
      const rows = await getUsage({ caller, query }, deps);
      if (req.accepts(["application/json", "text/csv"]) === "text/csv") {
        res.status(200).type("text/csv; charset=utf-8").send(usageCsv(rows, query.group_by));
        return;
      }
      return { json: rows };
    },
  }),
  endpoint({
    method: "get",
    path: "/quotas",
    operationId: "getQuotas",
    tag: "Usage",
    summary: "The quotas in force and how much of each is used",
    description:
      "The organization's quotas (docs/reference/tenants.md#usage-quotas-and-backpressure): jobs created per UTC day and per UTC month, pending jobs held at once and " +
      "payload bytes stored at once, each with its limit (null: unlimited), what is used now, and when a period quota " +
      "starts over. Set by the deployment's operator (QUOTA_* settings, `npm run org:quota`), never over HTTP. Past a " +
      "quota, job creation answers 429 `quota_exceeded`. Owners and admins.",
    access: "user",
    roles: ["owner", "admin"],
    responses: {
      200: {
        description: "Every quota, in force or not.",
        json: {
          component: "Quotas",
          example: {
            quotas: [
              { name: "jobs_per_day", limit: 10000, used: 9120, resets_at: "2026-11-29T00:00:00.000Z" },
              { name: "jobs_per_month", limit: null, used: 0, resets_at: "2026-12-01T00:00:00.000Z" },
              { name: "pending_max", limit: 5000, used: 312, resets_at: null },
              { name: "payload_bytes_max", limit: null, used: 0, resets_at: null },
            ],
          },
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403, 429],
    async handle({ caller }, deps) {
      return { json: await getQuotas({ caller }, deps) };
    },
  }),
];
