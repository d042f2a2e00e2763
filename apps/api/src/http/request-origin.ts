// Where a request came from, as the audit log records it (docs/reference/tenants.md#audit-log): read from Express at
// the HTTP layer and handed to services as plain values.
import type { Request } from "express";
import type { AuditRequest } from "@conveyor/db";

/** Where a request came from: the client IP (as TRUST_PROXY lets Express read it), its user agent and request id. */
export function requestOrigin(req: Request): AuditRequest {
  // An IPv4 client of a dual-stack socket arrives as ::ffff:a.b.c.d; people read it as a.b.c.d.
  const ip = req.ip?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1") ?? null;
  return { ip, userAgent: req.get("user-agent") ?? null, requestId: req.id };
}
