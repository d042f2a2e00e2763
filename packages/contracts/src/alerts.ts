// Alert rules (docs/reference/time.md#alerts, docs/reference/robustness.md#r60): the conditions and channels a rule may name, and the one decision of an
// evaluation — does what was observed change the rule's state? — as a pure function: a rule fires only after its
// condition has held for its whole window without a break, and resolves only after it has been clear as long, so a
// condition that flaps notifies at most once per window. The leader's evaluator (apps/worker) feeds it observations
// read from Postgres; the API checks rules with the shapes below.

export const ALERT_CONDITION_KINDS = ["failure_rate", "queue_wait", "no_worker", "webhook_failing", "schedule_missed", "quota"] as const;
export type AlertConditionKind = (typeof ALERT_CONDITION_KINDS)[number];
export const ALERT_QUOTAS = ["jobs_per_day", "jobs_per_month", "pending_max", "payload_bytes_max"] as const;

export type AlertCondition =
  | { kind: "failure_rate"; type?: string; threshold_percent: number; min_jobs: number }
  | { kind: "queue_wait"; type: string; threshold_seconds: number }
  | { kind: "no_worker"; type: string }
  | { kind: "webhook_failing"; endpoint_id: string; consecutive: number }
  | { kind: "schedule_missed"; schedule_id: string }
  | { kind: "quota"; quota: (typeof ALERT_QUOTAS)[number]; threshold_percent: number };

export type AlertChannel = { kind: "chat"; url: string } | { kind: "email"; to: string } | { kind: "webhook" };

export const ALERT_WINDOW_MIN_SECONDS = 10;
export const ALERT_WINDOW_MAX_SECONDS = 86_400;
export const ALERT_WINDOW_DEFAULT_SECONDS = 300;
export const ALERT_CHANNELS_MAX = 10;
/** The signed webhook events a rule's `{kind: "webhook"}` channel sends to the organization's endpoints. */
export const ALERT_EVENT_TYPES = { fired: "conveyor.alert.fired", resolved: "conveyor.alert.resolved" } as const;

export type AlertState = "ok" | "firing";

/** What one evaluation saw: whether the condition holds, and in words (no payload, secret or token). */
export type AlertObservation = { holds: boolean; text: string };

export type AlertStep = {
  state: AlertState;
  pendingSince: Date | null;
  /** The state changed in this evaluation: notify the channels once. */
  change: "fired" | "resolved" | null;
};

/**
 * The rule's next state. An observation that disagrees with the state starts (or continues) a pending spell; once
 * the spell has lasted `windowMs` the state changes. An observation that agrees ends the spell — so a flapping
 * condition never changes the state more than once per window.
 */
export function stepAlert(current: { state: AlertState; pendingSince: Date | null }, holds: boolean, now: Date, windowMs: number): AlertStep {
  const agrees = holds === (current.state === "firing");
  if (agrees) return { state: current.state, pendingSince: null, change: null };
  const since = current.pendingSince ?? now;
  if (now.getTime() - since.getTime() < windowMs) return { state: current.state, pendingSince: since, change: null };
  return holds ? { state: "firing", pendingSince: null, change: "fired" } : { state: "ok", pendingSince: null, change: "resolved" };
}

/** The words of a condition, for a notification ("failure rate of webhook jobs above 20 % over 5 min (min 10 jobs)"). */
export function describeCondition(condition: AlertCondition, windowSeconds: number): string {
  const window = windowSeconds % 60 === 0 ? `${windowSeconds / 60} min` : `${windowSeconds} s`;
  switch (condition.kind) {
    case "failure_rate":
      return `failure rate of ${condition.type ? `${condition.type} jobs` : "all jobs"} at or above ${condition.threshold_percent} % over ${window} (at least ${condition.min_jobs} finished)`;
    case "queue_wait":
      return `the oldest due ${condition.type} job waiting ${condition.threshold_seconds} s or more`;
    case "no_worker":
      return `${condition.type} jobs due with no live worker serving the type`;
    case "webhook_failing":
      return `webhook endpoint ${condition.endpoint_id} failing ${condition.consecutive} deliveries in a row`;
    case "schedule_missed":
      return `schedule ${condition.schedule_id} missing its tick`;
    case "quota":
      return `quota ${condition.quota} at or above ${condition.threshold_percent} % of its limit`;
  }
}
