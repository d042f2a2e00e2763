// What services receive. Every service is `async function name(options, deps)`: one options object with its
// inputs (the caller among them), and these dependencies, whose `db` a caller may swap for a transaction.
import type { Role } from "@conveyor/contracts";
import type { AuditRequest } from "@conveyor/db";
import type { AppDeps } from "../../context";
import type { Admission } from "./admission";
import type { EventHub } from "./event-hub";
import type { JobCatalog } from "./job-catalog";
import type { JobWriter } from "./job-writer";
import type { FailedLoginGuard } from "./login-guard";
import type { ReadRouting } from "./read-routing";
import type { LeaseHub } from "./worker-leases";

export type ServiceDeps = AppDeps & {
  catalog: JobCatalog;
  /** The shared group-commit writer (made by the admission, which hears of every commit). */
  writer: JobWriter;
  /** Failed password checks per account (docs/reference/tenants.md#authentication), shared by login and invite acceptance. */
  failedLogins: FailedLoginGuard;
  /** This process' tail of the event log, shared by every event stream it serves (docs/reference/events.md#events). */
  events: EventHub;
  /** Which pool a heavy read uses: the replica, or the primary for whoever just changed something (docs/reference/high-availability.md#high-availability). */
  reads: ReadRouting;
  /** Whether an organization may add jobs, and through which writer: backpressure and quotas (docs/reference/tenants.md#usage-quotas-and-backpressure). */
  admission: Admission;
  /** This process' long-polls of the worker protocol (docs/reference/lifecycle.md#your-own-workers), waiting in memory for work. */
  leases: LeaseHub;
};

/**
 * Who a request acts for, read from the database on every request: a user through their token (JWT) or console
 * session, or an API key, which acts with the rights of a member of its organization.
 */
export type Caller = {
  kind: "jwt" | "api_key" | "session" | "public_token";
  orgId: string;
  userId: string;
  role: Role;
  /** Set when the caller used an API key. */
  apiKeyId?: string;
  /** Set for an API key of the `worker` role (docs/reference/lifecycle.md#your-own-workers): it may use the worker protocol and nothing else. */
  worker?: true;
  /** Set when the caller used a console session cookie: the session and the CSRF token that goes with it. */
  session?: { id: string; csrfToken: string; viaSso: boolean };
  /**
   * Set when the caller used a job's public token (docs/reference/events.md#progress-and-live-results): it reads that job only (GET /jobs/{id}, /output,
   * /events), as the member who made it; every other endpoint refuses the token before this is built.
   */
  publicToken?: { id: string; jobId: string; expiresAt: Date };
  /** Where the request came from, for the audit log (docs/reference/tenants.md#audit-log). */
  request: AuditRequest;
};
