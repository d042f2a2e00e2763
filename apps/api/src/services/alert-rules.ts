// Alert rules (docs/reference/time.md#alerts): an owner or admin says what to watch (a condition over a window) and whom to tell (chat,
// e-mail, the organization's webhook endpoints); the workers' leader evaluates them (apps/worker/src/maintenance/
// alert-evaluator.ts). A chat URL passes the same SSRF rule as a webhook endpoint's, here and again at each send; a
// condition naming an endpoint or a schedule must name one of the organization's. Every change is in the audit log.
import { urlPolicy } from "@conveyor/config";
import { urlRefusal, type AlertChannel, type AlertCondition } from "@conveyor/contracts";
import {
  deleteAlertRule as deleteRow,
  findAlertRule,
  findSchedule,
  inTransaction,
  insertAlertRule,
  isUuid,
  listAlertRules as listRows,
  listAlerts as listAlertRows,
  listWebhookEndpoints as listEndpointRows,
  newId,
  updateAlertRule as updateRow,
  type AlertJson,
  type AlertRuleJson,
} from "@conveyor/db";
import { notFound, validationFailed, type ErrorDetail } from "./infrastructure/errors";
import { decodeIdCursor, encodeIdCursor } from "./infrastructure/id-cursor";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type AlertRuleInput = { name: string; condition: AlertCondition; channels: AlertChannel[]; window_seconds: number };
export type AlertRulePatch = Partial<AlertRuleInput>;
type Deps = Pick<ServiceDeps, "db" | "config" | "clock">;

/** 400 naming each channel or condition field that is not acceptable. */
async function checkRule(orgId: string, rule: Pick<AlertRuleInput, "condition" | "channels">, deps: Deps): Promise<void> {
  const problems: ErrorDetail[] = [];
  rule.channels.forEach((channel, i) => {
    if (channel.kind !== "chat") return;
    // The same rule the worker applies again to every address the host resolves to, at every send.
    const refusal = urlRefusal(channel.url, urlPolicy(deps.config));
    if (refusal) problems.push({ path: `channels.${i}.url`, message: refusal });
  });
  const { condition } = rule;
  if (condition.kind === "webhook_failing") {
    const endpoints = await listEndpointRows(deps.db.pool, orgId);
    if (!endpoints.some((e) => e.id === condition.endpoint_id.toLowerCase())) {
      problems.push({ path: "condition.endpoint_id", message: "is not a webhook endpoint of your organization" });
    }
  }
  if (condition.kind === "schedule_missed" && !(isUuid(condition.schedule_id) && (await findSchedule(deps.db.pool, orgId, condition.schedule_id)))) {
    problems.push({ path: "condition.schedule_id", message: "is not a schedule of your organization" });
  }
  if (problems.length) throw validationFailed(problems);
}

/** What the audit log keeps of a rule: its shape, never a chat URL (its path is a credential) — only its host. */
function audited(rule: Pick<AlertRuleJson, "name" | "condition" | "channels" | "window_seconds">): Record<string, unknown> {
  return {
    name: rule.name,
    condition: rule.condition.kind,
    window_seconds: rule.window_seconds,
    channels: rule.channels.map((c) => (c.kind === "chat" ? `chat:${new URL(c.url).host}` : c.kind === "email" ? `email:${c.to}` : "webhook")).join(", "),
  };
}

/** A rule as answered: a chat URL's path is its credential, so only the host is shown back after saving. */
function toJson(rule: AlertRuleJson): AlertRuleJson {
  return { ...rule, channels: rule.channels.map((c) => (c.kind === "chat" ? { kind: "chat", url: `${new URL(c.url).origin}/…` } : c)) };
}

export async function createAlertRule(options: { caller: Caller; input: AlertRuleInput }, deps: Deps): Promise<AlertRuleJson> {
  const { caller, input } = options;
  await checkRule(caller.orgId, input, deps);
  const rule = await inTransaction(deps.db.pool, async (tx) => {
    const rule = await insertAlertRule(tx, {
      id: newId(),
      orgId: caller.orgId,
      name: input.name,
      condition: input.condition,
      channels: input.channels,
      windowSeconds: input.window_seconds,
      createdBy: caller.userId,
    });
    await audit(tx, caller, deps.clock, {
      action: "alert_rule.create",
      target: { type: "alert_rule", id: rule.id, label: rule.name },
      changes: changedFields({}, audited(rule)),
    });
    return rule;
  });
  return toJson(rule);
}

export async function listAlertRules(options: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<AlertRuleJson[]> {
  return (await listRows(deps.db.pool, options.caller.orgId)).map(toJson);
}

export async function getAlertRule(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<AlertRuleJson> {
  const rule = isUuid(options.id) ? await findAlertRule(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!rule) throw notFound("Alert rule");
  return toJson(rule);
}

/**
 * Changes any of name, condition, channels (replaced whole) and window_seconds; `silence_seconds` silences it for that
 * long from now (0 lifts a silence). A new condition or window starts the rule's observation over.
 */
export async function updateAlertRule(
  options: { caller: Caller; id: string; patch: AlertRulePatch & { silence_seconds?: number } },
  deps: Deps,
): Promise<AlertRuleJson> {
  const { caller, id, patch } = options;
  if (!isUuid(id)) throw notFound("Alert rule");
  const rule = await inTransaction(deps.db.pool, async (tx) => {
    const current = await findAlertRule(tx, caller.orgId, id, { lock: true });
    if (!current) throw notFound("Alert rule");
    const next = {
      name: patch.name ?? current.name,
      condition: patch.condition ?? current.condition,
      channels: patch.channels ?? current.channels,
      windowSeconds: patch.window_seconds ?? current.window_seconds,
    };
    if (patch.condition || patch.channels) await checkRule(caller.orgId, next, deps);
    const now = deps.clock.now();
    const silencedUntil =
      patch.silence_seconds === undefined
        ? current.silenced_until === null
          ? null
          : new Date(current.silenced_until)
        : patch.silence_seconds === 0
          ? null
          : new Date(now.getTime() + patch.silence_seconds * 1000);
    const restart = JSON.stringify(next.condition) !== JSON.stringify(current.condition) || next.windowSeconds !== current.window_seconds;
    const updated = (await updateRow(tx, caller.orgId, id, { ...next, silencedUntil, restart }))!;
    const shape = changedFields(audited(current), audited(updated));
    if (Object.keys(shape).length) {
      await audit(tx, caller, deps.clock, { action: "alert_rule.update", target: { type: "alert_rule", id, label: updated.name }, changes: shape });
    }
    if (patch.silence_seconds !== undefined) {
      await audit(tx, caller, deps.clock, {
        action: "alert_rule.silence",
        target: { type: "alert_rule", id, label: updated.name },
        details: { until: updated.silenced_until },
      });
    }
    return updated;
  });
  return toJson(rule);
}

export async function deleteAlertRule(options: { caller: Caller; id: string }, deps: Deps): Promise<void> {
  const { caller, id } = options;
  const deleted =
    isUuid(id) &&
    (await inTransaction(deps.db.pool, async (tx) => {
      const rule = await findAlertRule(tx, caller.orgId, id, { lock: true });
      if (!rule || !(await deleteRow(tx, caller.orgId, id))) return false;
      await audit(tx, caller, deps.clock, {
        action: "alert_rule.delete",
        target: { type: "alert_rule", id, label: rule.name },
        changes: changedFields(audited(rule), {}),
      });
      return true;
    }));
  if (!deleted) throw notFound("Alert rule");
}

export type AlertListQuery = { status?: "firing" | "resolved"; rule_id?: string; limit?: number; cursor?: string };

/** The organization's alerts, newest first, one page, and the query of the next while more remain. */
export async function listAlerts(
  options: { caller: Caller; query: AlertListQuery },
  deps: Pick<ServiceDeps, "db">,
): Promise<{ items: AlertJson[]; next: URLSearchParams | null }> {
  const { query } = options;
  const limit = query.limit ?? 100;
  const rows = await listAlertRows(deps.db.pool, options.caller.orgId, {
    status: query.status,
    ruleId: query.rule_id && isUuid(query.rule_id) ? query.rule_id : query.rule_id ? "00000000-0000-0000-0000-000000000000" : undefined,
    before: query.cursor === undefined ? undefined : decodeIdCursor(query.cursor),
    limit: limit + 1,
  });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const next =
    rows.length > limit && last
      ? new URLSearchParams({
          limit: String(limit),
          ...(query.status ? { status: query.status } : {}),
          ...(query.rule_id ? { rule_id: query.rule_id } : {}),
          cursor: encodeIdCursor(last.id),
        })
      : null;
  return { items, next };
}
