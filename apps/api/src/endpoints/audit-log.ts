// The audit log (docs/reference/tenants.md#audit-log): owners and admins read who did what; nothing changes or deletes an entry.
import Joi from "joi";
import { jobFilterFields } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint } from "../declarations/endpoint";
import { listAuditLog, type AuditLogQuery } from "../services/audit-log";

const ENTRY = "0193a5c4-9999-7c1d-9f3a-2b8e4d6f1a01";
const ADA = "0193a5c4-1111-7c1d-9f3a-2b8e4d6f1a01";
const BO = "0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01";

const auditQuery = Joi.object<AuditLogQuery>({
  actor_id: Joi.string().guid().description("Entries by this user or API key."),
  action: Joi.string()
    .max(100)
    .pattern(/^[a-z_.]+$/, "action name or prefix")
    .description("An action (`member.role_change`) or a prefix of actions (`member.`)."),
  target_id: Joi.string().guid().description("Entries about this member, invite, key, schedule, endpoint or job."),
  after: jobFilterFields.created_after.description("ISO 8601 date, or date-time with a zone: entries at or after it."),
  before: jobFilterFields.created_before.description("ISO 8601 date, or date-time with a zone: entries before it."),
  limit: Joi.number().integer().min(1).max(1000).description("Page size (default 50)."),
  cursor: Joi.string().max(200).description("Opaque; taken from the previous page's Link header."),
});

export const auditLogEndpoints = [
  endpoint({
    method: "get",
    path: "/audit-log",
    operationId: "listAuditLog",
    tag: "Audit log",
    summary: "Read the audit log",
    description:
      "Owners and admins; a user token or a console session. Every state-changing request made by a person or an API key " +
      "(job creation aside: jobs are their own record), newest first, with who, what, from where, and the fields it changed. " +
      "One page at a time (`limit`, default 50) with a `Link` header to the next while more remain; the filters combine. " +
      "Entries are kept AUDIT_RETENTION_DAYS days; no request changes or deletes one.",
    access: "user",
    roles: ["owner", "admin"],
    query: auditQuery,
    responses: {
      200: {
        description: "The entries.",
        json: {
          component: "AuditEntry",
          array: true,
          example: [
            {
              id: ENTRY,
              time: "2026-11-21T09:30:00.000Z",
              actor: { type: "user", id: ADA, email: "ada@example.com" },
              action: "member.role_change",
              target: { type: "user", id: BO, email: "bo@example.com" },
              ip: "203.0.113.7",
              user_agent: "Mozilla/5.0",
              request_id: "9f0c2d1e-4b6a-4e55-8a1f-3c2b7d9e0a11",
              changes: { role: { before: "member", after: "admin" } },
              details: null,
            },
          ],
        },
        headers: {
          Link: { description: 'While more remain: `<…/audit-log?…&limit=…&cursor=…>; rel="next"` (the same filters).', schema: { type: "string" } },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, query }, deps) {
      const { items, next } = await listAuditLog({ caller, query }, deps);
      return { json: items, headers: next ? { Link: `<${deps.config.PUBLIC_URL}/audit-log?${next}>; rel="next"` } : undefined };
    },
  }),
];
