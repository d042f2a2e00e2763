// What the leader's alert evaluator reads and writes (docs/reference/time.md#alerts): each rule's condition observed from Postgres, the
// rule's state moved under its row lock (so two leaders overlapping after a lease expiry notify once), and the
// organization's webhook endpoints a `{kind: "webhook"}` channel signs its events for. Observations are words made of
// counts, type names and ids — never a payload, a secret or a token (docs/reference/robustness.md#r60).
import type pg from "pg";
import { describeCondition, stepAlert, type AlertChannel, type AlertCondition, type AlertObservation, type AlertState } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { inTransaction } from "../core/transaction";
import { GONE_BEATS } from "../flow/workers";
import { findQuotaOverrides, limitsInForce, readQuotaUse, type QuotaLimits } from "../usage/quotas";
import type { AlertJson } from "./rules";

export type RuleToEvaluate = {
  id: string;
  orgId: string;
  name: string;
  condition: AlertCondition;
  channels: AlertChannel[];
  windowSeconds: number;
};

/** Every alert rule, oldest first: the evaluator's round. */
export async function listRulesToEvaluate(db: pg.Pool): Promise<RuleToEvaluate[]> {
  const { rows } = await db.query<RuleToEvaluate>(
    `SELECT id, org_id AS "orgId", name, condition, channels, window_seconds AS "windowSeconds" FROM alert_rules ORDER BY id`,
  );
  return rows;
}

const pct = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((1000 * part) / whole) / 10);

/** What the rule's condition looks like now, by Postgres' clock. `quotaDefaults`: the QUOTA_* settings. */
export async function observeCondition(db: pg.Pool, rule: RuleToEvaluate, quotaDefaults: QuotaLimits): Promise<AlertObservation> {
  const { orgId, condition } = rule;
  switch (condition.kind) {
    case "failure_rate": {
      const { rows } = await db.query<{ failed: number; finished: number }>(
        `SELECT count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*)::int AS finished FROM jobs
          WHERE org_id = $1 AND status IN ('done', 'failed') AND finished_at >= now() - make_interval(secs => $2)
            AND ($3::text IS NULL OR type = $3) AND left(type, 1) <> '_'`,
        [orgId, rule.windowSeconds, condition.type ?? null],
      );
      const { failed, finished } = rows[0]!;
      const rate = pct(failed, finished);
      return {
        holds: finished >= condition.min_jobs && rate >= condition.threshold_percent,
        text: `${failed} of ${finished} ${condition.type ?? ""} jobs finished in the window failed (${rate} %)`.replace("  ", " "),
      };
    }
    case "queue_wait": {
      // Due and not started: waiting in Postgres (a paused or starved queue) or handed to a worker that does not take
      // it (stopped, stuck) — the queue row stays until the job finishes, so a started one is told by its status.
      const { rows } = await db.query<{ wait: number | null; due: number }>(
        `SELECT extract(epoch FROM now() - min(q.due_at))::float8 AS wait, count(*)::int AS due
           FROM job_queue q JOIN jobs j ON j.id = q.job_id
          WHERE q.org_id = $1 AND q.type = $2 AND q.due_at <= now() AND j.status = 'pending'`,
        [orgId, condition.type],
      );
      const wait = Math.floor(rows[0]!.wait ?? 0);
      return { holds: wait >= condition.threshold_seconds, text: `${rows[0]!.due} ${condition.type} jobs due; the oldest has waited ${wait} s` };
    }
    case "no_worker": {
      const { rows } = await db.query<{ due: number; workers: number }>(
        `SELECT (SELECT count(*)::int FROM job_queue WHERE org_id = $1 AND type = $2 AND dispatched_at IS NULL AND due_at <= now()) AS due,
                (SELECT count(*)::int FROM workers w WHERE $2 = ANY(w.types)
                    AND w.heartbeat_at >= now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000))
                -- The organization's own workers (docs/reference/lifecycle.md#your-own-workers): an organization type has no others.
              + (SELECT count(*)::int FROM protocol_workers p WHERE p.org_id = $1 AND $2 = ANY(p.types)
                    AND p.heartbeat_at >= now() - make_interval(secs => p.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)) AS workers`,
        [orgId, condition.type],
      );
      const { due, workers } = rows[0]!;
      return { holds: due > 0 && workers === 0, text: `${due} ${condition.type} jobs due; ${workers} live workers serve the type` };
    }
    case "webhook_failing": {
      const { rows } = await db.query<{ failed: boolean }>(
        `SELECT d.error IS NOT NULL AS failed FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
          WHERE w.org_id = $1 AND d.endpoint_id = $2 ORDER BY d.id DESC LIMIT $3`,
        [orgId, condition.endpoint_id, condition.consecutive],
      );
      const failing = rows.findIndex((r) => !r.failed);
      const run = failing === -1 ? rows.length : failing;
      return { holds: run >= condition.consecutive, text: `the last ${run} deliveries to endpoint ${condition.endpoint_id} failed` };
    }
    case "schedule_missed": {
      const { rows } = await db.query<{ paused: boolean; late: number | null }>(
        "SELECT paused, extract(epoch FROM now() - next_run_at)::float8 AS late FROM schedules WHERE id = $1 AND org_id = $2",
        [condition.schedule_id, orgId],
      );
      const row = rows[0];
      if (!row) return { holds: true, text: `schedule ${condition.schedule_id} no longer exists` };
      const late = Math.floor(row.late ?? 0);
      // A tick the ticker has not handled a minute after its time: the leader is away or the schedule cannot tick.
      return { holds: !row.paused && late > 60, text: row.paused ? "the schedule is paused" : `its next tick is ${Math.max(0, late)} s overdue` };
    }
    case "quota": {
      const overrides = (await findQuotaOverrides(db, [orgId])).get(orgId) ?? null;
      const limits = limitsInForce(quotaDefaults, overrides);
      const limit = limits[condition.quota];
      if (limit === null) return { holds: false, text: `no ${condition.quota} quota is in force` };
      const use = (await readQuotaUse(db, orgId, limits, new Date()))[condition.quota];
      const share = pct(use, limit);
      return { holds: share >= condition.threshold_percent, text: `${condition.quota}: ${use} of ${limit} used (${share} %)` };
    }
  }
}

export type AlertOutcome = {
  change: "fired" | "resolved" | null;
  alert: AlertJson | null;
  silenced: boolean;
  state: AlertState;
  /** What was seen in this round: for a resolution, the observation that cleared it (the alert's summary keeps the firing one). */
  observed: string;
};

/**
 * Moves the rule's state by what was observed (stepAlert: held for its window before firing or resolving), under its
 * row lock and by Postgres' clock. A firing opens an alert, a resolution closes it; the answer says whether to notify.
 * Null when the rule was deleted meanwhile.
 */
export async function recordObservation(pool: pg.Pool, rule: RuleToEvaluate, observation: AlertObservation): Promise<AlertOutcome | null> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ state: AlertState; pending_since: Date | null; alert_id: string | null; silenced: boolean; now: Date }>(
      `SELECT state, pending_since, alert_id, coalesce(silenced_until > now(), false) AS silenced, now() AS now
         FROM alert_rules WHERE id = $1 FOR UPDATE`,
      [rule.id],
    );
    const current = rows[0];
    if (!current) return null;
    const step = stepAlert({ state: current.state, pendingSince: current.pending_since }, observation.holds, current.now, rule.windowSeconds * 1000);
    let alert: AlertJson | null = null;
    let alertId = current.alert_id;
    if (step.change === "fired") {
      alertId = newId();
      const summary = `${rule.name}: ${describeCondition(rule.condition, rule.windowSeconds)} — ${observation.text}`;
      alert = (
        await tx.query<AlertJson>(
          `INSERT INTO alerts (id, org_id, rule_id, rule_name, summary, fired_at, silenced) VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, rule_id, rule_name, 'firing' AS status, summary, silenced, to_char(fired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS fired_at, NULL AS resolved_at`,
          [alertId, rule.orgId, rule.id, rule.name, summary, current.now, current.silenced],
        )
      ).rows[0]!;
    } else if (step.change === "resolved" && alertId) {
      alert =
        (
          await tx.query<AlertJson>(
            `UPDATE alerts SET resolved_at = $2 WHERE id = $1
             RETURNING id, rule_id, rule_name, 'resolved' AS status, summary, silenced, to_char(fired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS fired_at,
                       to_char(resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS resolved_at`,
            [alertId, current.now],
          )
        ).rows[0] ?? null;
      alertId = null;
    }
    await tx.query("UPDATE alert_rules SET state = $2, pending_since = $3, alert_id = $4, evaluated_at = $5, observation = $6 WHERE id = $1", [
      rule.id,
      step.state,
      step.pendingSince,
      alertId,
      current.now,
      observation.text,
    ]);
    return { change: step.change, alert, silenced: current.silenced, state: step.state, observed: observation.text };
  });
}

export type SigningEndpoint = { id: string; url: string; sealedSecret: Buffer; sealedPreviousSecret: Buffer | null };

/** The organization's enabled webhook endpoints, with their sealed signing secrets (a webhook channel's targets). */
export async function listSigningEndpoints(db: pg.Pool, orgId: string): Promise<SigningEndpoint[]> {
  const { rows } = await db.query<SigningEndpoint>(
    `SELECT id, url, secret AS "sealedSecret", CASE WHEN previous_secret_expires_at > now() THEN previous_secret END AS "sealedPreviousSecret"
       FROM webhook_endpoints WHERE org_id = $1 AND disabled_at IS NULL ORDER BY id`,
    [orgId],
  );
  return rows;
}
