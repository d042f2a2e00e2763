// What the audit log records (docs/reference/tenants.md#audit-log): the action names, one per kind of state-changing request made by a person
// or an API key. The API writes them, GET /audit-log filters on them (an `action` filter is a prefix of these),
// and the console reads each as a sentence.

export const AUDIT_ACTIONS = [
  "job.cancel",
  "job.replay",
  "job.run_now",
  "jobs.bulk",
  "schedule.create",
  "schedule.update",
  "schedule.delete",
  "member.invite",
  "member.role_change",
  "member.remove",
  "invite.revoke",
  "invite.accept",
  "api_key.create",
  "api_key.revoke",
  "webhook_endpoint.create",
  "webhook_endpoint.delete",
  "webhook_endpoint.rotate_secret",
  "webhook_endpoint.update",
  "webhook_endpoint.redeliver",
  "webhook_endpoint.test",
  "webhook_endpoint.bulk_redeliver",
  "rate_limit.put",
  "rate_limit.delete",
  "queue.update",
  "session.login",
  "session.logout",
  "session.login_failed",
  "password.change",
  "sso.update",
  "sso.delete",
  "sso.login",
  "org.quota_update",
  "schedule.run_skipped",
  "schedule.backfill",
  "alert_rule.create",
  "alert_rule.update",
  "alert_rule.delete",
  "alert_rule.silence",

  "waitpoint.complete",
  "waitpoint.cancel",

  "job_type.create",
  "job_type.update",
  "job_type.delete",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did it: a person (user), a service (api_key), or Conveyor itself (system). */
export const AUDIT_ACTOR_TYPES = ["user", "api_key", "system"] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** The actions an `action` filter names: exactly one, or every action it is a prefix of (`member.`). */
export function auditActionsMatching(prefix: string): AuditAction[] {
  return AUDIT_ACTIONS.filter((action) => action.startsWith(prefix));
}
