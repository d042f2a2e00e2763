// An audit entry read as a sentence ("ada@example.com changed bo@example.com's role from member to admin"), from what
// the entry holds: who, the action, its target, the fields changed and the details. Pure, so the page and its test
// read the same words.
import type { ResponseBody } from "@conveyor/client";

export type AuditEntry = ResponseBody<"/audit-log", "get">[number];
type Party = { type: string; id: string | null; email?: string; name?: string };

const KIND: Record<string, string> = {
  api_key: "API key",
  schedule: "schedule",
  webhook_endpoint: "webhook endpoint",
  job: "job",
  invite: "invite",
  organization: "organization",
  user: "user",
  queue: "queue",
  rate_limit: "rate limit",
  waitpoint: "waitpoint",
};

/** How a party is named: a person by e-mail, a key or a thing by its name in quotes, else by kind and short id. */
export function nameOf(party: Party | null | undefined): string {
  if (!party) return "someone";
  if (party.email) return party.email;
  if (party.type === "system") return "Conveyor";
  const kind = KIND[party.type] ?? party.type.replace(/_/g, " ");
  if (party.name) return `${kind} “${party.name}”`;
  return party.id ? `${kind} …${party.id.slice(-8)}` : kind;
}

const show = (value: unknown): string => {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length ? value.map(show).join(", ") : "none";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
};

/** "cron from 0 2 * * * to 30 2 * * *; paused from false to true" */
function changeList(changes: AuditEntry["changes"]): string {
  return Object.entries(changes ?? {})
    .map(([field, { before, after }]) => `${field.replace(/_/g, " ")} from ${show(before)} to ${show(after)}`)
    .join("; ");
}

const FAILURES: Record<string, string> = {
  wrong_password: "wrong password",
  sso_required: "the organization requires single sign-on",
  no_sign_in: "the sign-in had expired or was already used",
  provider_error: "the identity provider refused",
  token_rejected: "the identity provider's answer could not be verified",
  email_missing: "no e-mail address from the identity provider",
  email_unverified: "the e-mail address is not verified",
  domain_not_allowed: "the e-mail domain is not allowed",
};

/** "100 per minute", from a rate limit's changes (null when it had none then). */
function rate(limit: unknown, period: unknown): string | null {
  return limit === null || limit === undefined ? null : `${show(limit)} per ${show(period)}`;
}

/** A queue's settings changed, as verbs: "paused", "set its concurrency limit to 5", "put it under rate limit “api”". */
function queueChanges(changes: NonNullable<AuditEntry["changes"]>): string[] {
  const parts: string[] = [];
  if (changes.paused) parts.push(changes.paused.after ? "paused it" : "resumed it");
  const concurrency = changes.concurrency_limit;
  if (concurrency)
    parts.push(
      concurrency.after === null
        ? `removed its concurrency limit (was ${show(concurrency.before)})`
        : `set its concurrency limit to ${show(concurrency.after)}`,
    );
  const limit = changes.rate_limit;
  if (limit) parts.push(limit.after === null ? `took it off rate limit “${show(limit.before)}”` : `put it under rate limit “${show(limit.after)}”`);
  return parts;
}

/** A bulk action's filter in words: "status failed, of type webhook, created from 2026-11-20T00:00:00.000Z". */
export function filterWords(filter: unknown): string {
  if (!filter || typeof filter !== "object") return "every job";
  const f = filter as Record<string, unknown>;
  const text = (key: string) => (typeof f[key] === "string" ? (f[key] as string) : undefined);
  const parts = [
    text("status") && `status ${text("status")!.split(",").join(" or ")}`,
    text("type") && `of type ${text("type")}`,
    text("created_after") && `created from ${text("created_after")}`,
    text("created_before") && `created before ${text("created_before")}`,
    text("finished_after") && `finished from ${text("finished_after")}`,
    text("finished_before") && `finished before ${text("finished_before")}`,
    text("schedule_id") && `made by schedule …${text("schedule_id")!.slice(-8)}`,
    text("failure_group") && `of failure group ${text("failure_group")}`,
    text("due") && (text("due") === "now" ? "due now" : "due later"),
    text("q") !== undefined && `found by the search “${text("q")}”`,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "every job";
}

const plural = (n: number, one: string) => `${n.toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`;

/** The entry as one sentence. */
export function auditSentence(entry: AuditEntry): string {
  const who = nameOf(entry.actor);
  const what = nameOf(entry.target);
  const changes = entry.changes ?? {};
  const details = (entry.details ?? {}) as Record<string, unknown>;
  const after = (field: string) => show(changes[field]?.after);
  switch (entry.action) {
    case "member.role_change":
      return `${who} changed ${what}'s role from ${show(changes.role?.before)} to ${after("role")}`;
    case "member.invite":
      return `${who} invited ${what} as ${after("role")}`;
    case "member.remove":
      return `${who} removed ${what} (${show(changes.role?.before)}) from the organization`;
    case "invite.revoke":
      return `${who} withdrew the invite for ${what}`;
    case "invite.accept":
      return `${who} accepted their invite and joined as ${after("role")}`;
    case "api_key.create":
      return `${who} created ${what}`;
    case "api_key.revoke":
      return `${who} revoked ${what}`;
    case "webhook_endpoint.create":
      return `${who} added ${what}, for ${after("events")}`;
    case "webhook_endpoint.delete":
      return `${who} deleted ${what}`;
    case "webhook_endpoint.rotate_secret":
      return `${who} rotated the signing secret of ${what}`;
    case "webhook_endpoint.update":
      return `${who} changed ${what}: ${[changeList(changes), details.url_changed ? "a new URL" : ""].filter(Boolean).join("; ")}`;
    case "webhook_endpoint.redeliver":
      return `${who} sent event ${show(details.event_id)} (${show(details.event_type)}) to ${what} again`;
    case "webhook_endpoint.test":
      return `${who} sent a test event to ${what}`;
    case "webhook_endpoint.bulk_redeliver": {
      const count = typeof details.events === "number" ? details.events : 0;
      const which = typeof details.deliveries === "number" ? `${details.deliveries} picked deliveries` : "its failed deliveries";
      return `${who} sent ${count} event${count === 1 ? "" : "s"} of ${which} to ${what} again`;
    }
    case "schedule.create":
      return `${who} created ${what} (${after("cron")}, ${after("timezone")}, makes ${after("job_type")} jobs)`;
    case "schedule.update": {
      const parts = [changeList(changes), details.payload_changed ? "changed the job's payload" : ""].filter(Boolean);
      return `${who} changed ${what}: ${parts.join("; ")}`;
    }
    case "schedule.delete":
      return `${who} deleted ${what}`;
    case "schedule.run_skipped":
      return `${what} did not make its ${typeof details.tick === "string" ? `${details.tick} ` : ""}job: the organization's ${show(details.quota).replace(/_/g, " ")} quota (${show(details.limit)}) was used up`;
    case "org.quota_update":
      return `${who} changed ${what}'s quotas: ${changeList(changes)}`;
    case "job.cancel":
      return changes.status ? `${who} cancelled ${what}` : `${who} asked ${what} to stop`;
    case "job.replay":
      return `${who} replayed ${what}${typeof details.replay_id === "string" ? ` as job …${details.replay_id.slice(-8)}` : ""}`;
    case "job.run_now":
      return `${who} ran ${what} now instead of waiting for its time`;
    case "jobs.bulk": {
      const action = details.action === "replay" ? "replayed" : "cancelled";
      const scope = typeof details.ids === "number" ? `named one by one (${plural(details.ids, "job")})` : `matching ${filterWords(details.filter)}`;
      return `${who} ${action} ${plural(Number(details.affected ?? 0), "job")} in bulk, ${scope}`;
    }
    case "queue.update": {
      // "paused queue “scripted”", "set queue “scripted”'s concurrency limit to 5" (issue 48 #9: "paused on queue").
      if (changes.paused && Object.keys(changes).length === 1) return `${who} ${changes.paused.after ? "paused" : "resumed"} ${what}`;
      const parts = queueChanges(changes);
      return parts.length ? `${who} changed ${what}: ${parts.join(" and ")}` : `${who} saved ${what}'s settings unchanged`;
    }
    case "waitpoint.complete":
      return `${who} completed ${what}, releasing the jobs waiting on it`;
    case "waitpoint.cancel":
      return `${who} cancelled ${what}; the jobs waiting on it hear that it ended`;
    case "rate_limit.put": {
      if (changes.limit?.before === null) return `${who} created ${what}: ${rate(changes.limit.after, changes.period?.after)}`;
      const parts = [
        changes.limit && `its limit from ${show(changes.limit.before)} to ${show(changes.limit.after)}`,
        changes.period && `its period from a ${show(changes.period.before)} to a ${show(changes.period.after)}`,
      ].filter(Boolean);
      return parts.length ? `${who} changed ${what}: ${parts.join(" and ")}` : `${who} saved ${what} unchanged`;
    }
    case "rate_limit.delete": {
      const was = rate(changes.limit?.before, changes.period?.before);
      return `${who} deleted ${what}${was ? ` (${was})` : ""}`;
    }
    case "session.login":
      return `${who} logged in with a password${details.credential === "token" ? " (API token)" : ""}`;
    case "sso.login":
      return `${who} signed in with single sign-on${details.joined ? ` and joined as ${after("role")}` : ""}`;
    case "session.logout":
      return `${who} logged out`;
    case "session.login_failed": {
      const why = FAILURES[String(details.reason)] ?? String(details.reason ?? "refused");
      const how = details.method === "sso" ? "A single sign-on" : "A login";
      return entry.actor.email ? `${how} as ${entry.actor.email} failed: ${why}` : `${how} failed: ${why}`;
    }
    case "password.change":
      return `${who} changed their password`;
    case "sso.update":
      return changes.issuer?.before === null
        ? `${who} set up single sign-on with ${after("issuer")} for ${after("email_domains")}`
        : `${who} changed single sign-on: ${[changeList(changes), details.client_secret_changed ? "a new client secret" : ""].filter(Boolean).join("; ")}`;
    case "sso.delete":
      return `${who} removed single sign-on`;
    default: {
      const list = changeList(changes);
      return `${who}: ${entry.action}${entry.target ? ` on ${what}` : ""}${list ? ` (${list})` : ""}`;
    }
  }
}
