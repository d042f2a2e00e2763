// Alert rules and alerts as the API reads and writes them: every statement names the organization.
import type pg from "pg";
import type { AlertChannel, AlertCondition, AlertState } from "@conveyor/contracts";
import { iso } from "../core/job-sql";

type Client = pg.Pool | pg.PoolClient;

export type AlertRuleJson = {
  id: string;
  name: string;
  condition: AlertCondition;
  channels: AlertChannel[];
  window_seconds: number;
  silenced_until: string | null;
  state: AlertState;
  observation: string | null;
  evaluated_at: string | null;
  created_at: string;
  updated_at: string;
};

export type AlertJson = {
  id: string;
  rule_id: string;
  rule_name: string;
  status: "firing" | "resolved";
  summary: string;
  silenced: boolean;
  fired_at: string;
  resolved_at: string | null;
};

const RULE = `r.id, r.name, r.condition, r.channels, r.window_seconds, ${iso("r.silenced_until")} AS silenced_until, r.state, r.observation,
  ${iso("r.evaluated_at")} AS evaluated_at, ${iso("r.created_at")} AS created_at, ${iso("r.updated_at")} AS updated_at`;
const ALERT = `a.id, a.rule_id, a.rule_name, CASE WHEN a.resolved_at IS NULL THEN 'firing' ELSE 'resolved' END AS status, a.summary, a.silenced,
  ${iso("a.fired_at")} AS fired_at, ${iso("a.resolved_at")} AS resolved_at`;

export type NewAlertRule = {
  id: string;
  orgId: string;
  name: string;
  condition: AlertCondition;
  channels: AlertChannel[];
  windowSeconds: number;
  createdBy: string | null;
};

export async function insertAlertRule(db: Client, rule: NewAlertRule): Promise<AlertRuleJson> {
  const { rows } = await db.query<AlertRuleJson>(
    `INSERT INTO alert_rules AS r (id, org_id, name, condition, channels, window_seconds, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RULE}`,
    [rule.id, rule.orgId, rule.name, JSON.stringify(rule.condition), JSON.stringify(rule.channels), rule.windowSeconds, rule.createdBy],
  );
  return rows[0]!;
}

export async function findAlertRule(db: Client, orgId: string, id: string, options: { lock?: boolean } = {}): Promise<AlertRuleJson | null> {
  const { rows } = await db.query<AlertRuleJson>(`SELECT ${RULE} FROM alert_rules r WHERE r.id = $1 AND r.org_id = $2${options.lock ? " FOR UPDATE" : ""}`, [
    id,
    orgId,
  ]);
  return rows[0] ?? null;
}

export async function listAlertRules(db: Client, orgId: string): Promise<AlertRuleJson[]> {
  const { rows } = await db.query<AlertRuleJson>(`SELECT ${RULE} FROM alert_rules r WHERE r.org_id = $1 ORDER BY r.id DESC`, [orgId]);
  return rows;
}

/** Writes a rule's editable fields; a changed condition or window starts its evaluation over (no spell carried across). */
export async function updateAlertRule(
  db: Client,
  orgId: string,
  id: string,
  next: { name: string; condition: AlertCondition; channels: AlertChannel[]; windowSeconds: number; silencedUntil: Date | null; restart: boolean },
): Promise<AlertRuleJson | null> {
  const { rows } = await db.query<AlertRuleJson>(
    `UPDATE alert_rules r SET name = $3, condition = $4, channels = $5, window_seconds = $6, silenced_until = $7, updated_at = now(),
            pending_since = CASE WHEN $8 THEN NULL ELSE r.pending_since END
      WHERE r.id = $1 AND r.org_id = $2 RETURNING ${RULE}`,
    [id, orgId, next.name, JSON.stringify(next.condition), JSON.stringify(next.channels), next.windowSeconds, next.silencedUntil, next.restart],
  );
  return rows[0] ?? null;
}

export async function deleteAlertRule(db: Client, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM alert_rules WHERE id = $1 AND org_id = $2", [id, orgId]);
  return (rowCount ?? 0) > 0;
}

/** The organization's alerts, newest first (firing and resolved, or one of them), `limit` before the id `before`. */
export async function listAlerts(
  db: Client,
  orgId: string,
  query: { status?: "firing" | "resolved"; ruleId?: string; before?: string; limit: number },
): Promise<AlertJson[]> {
  const params: unknown[] = [orgId, query.limit];
  let where = "a.org_id = $1";
  if (query.status) where += query.status === "firing" ? " AND a.resolved_at IS NULL" : " AND a.resolved_at IS NOT NULL";
  if (query.ruleId) where += ` AND a.rule_id = $${params.push(query.ruleId)}::uuid`;
  if (query.before) where += ` AND a.id < $${params.push(query.before)}::uuid`;
  const { rows } = await db.query<AlertJson>(`SELECT ${ALERT} FROM alerts a WHERE ${where} ORDER BY a.id DESC LIMIT $2`, params);
  return rows;
}
