// The alert evaluator (docs/reference/time.md#alerts): the leader's loop that evaluates every organization's alert rules from Postgres
// every ALERT_EVALUATION_MS. Each rule's condition is observed, then its state moved under its row lock with
// hysteresis (it must hold for the rule's window before firing or resolving; packages/contracts/src/alerts.ts); a
// change opens or closes an alert and is handed to the notifier, which sends in the background — a channel that
// fails or hangs never holds up this loop (docs/reference/robustness.md#r60). A silenced rule is evaluated and its alerts recorded,
// but nobody is told.
import type pg from "pg";
import { listRulesToEvaluate, NO_QUOTAS, observeCondition, recordObservation, type QuotaLimits } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { AlertNotifier } from "./alert-notifier";
import type { LeaderTask } from "../leadership/leadership";

export type AlertEvaluatorOptions = {
  pool: pg.Pool;
  logger: Logger;
  notifier: AlertNotifier;
  /** Between rounds (ALERT_EVALUATION_MS). Default 10 s. */
  intervalMs?: number;
  /** The QUOTA_* defaults, for quota conditions. */
  quotas?: QuotaLimits;
};

export class AlertEvaluator implements LeaderTask {
  readonly name = "alert-evaluator";
  private readonly loop: WakeLoop;

  constructor(private readonly options: AlertEvaluatorOptions) {
    this.loop = new WakeLoop({
      round: () => this.round(),
      retryMs: options.intervalMs ?? 10_000,
      warn: (error) => options.logger.warn(`alert evaluation round failed; retrying: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.options.notifier.close();
  }

  private async round(): Promise<number> {
    const { pool, logger, notifier } = this.options;
    for (const rule of await listRulesToEvaluate(pool)) {
      if (!this.loop.isActive) break;
      try {
        const observation = await observeCondition(pool, rule, this.options.quotas ?? NO_QUOTAS);
        const outcome = await recordObservation(pool, rule, observation);
        if (!outcome?.change || !outcome.alert) continue;
        logger.info(`alert ${outcome.change}`, { ruleId: rule.id, orgId: rule.orgId, alertId: outcome.alert.id, silenced: outcome.silenced });
        if (!outcome.silenced)
          notifier.notify({
            orgId: rule.orgId,
            ruleId: rule.id,
            change: outcome.change,
            alert: outcome.alert,
            observed: outcome.observed,
            channels: rule.channels,
          });
      } catch (error) {
        // One rule that cannot be evaluated (a bad stored condition) does not stop the others.
        logger.warn("alert rule could not be evaluated", { ruleId: rule.id, orgId: rule.orgId, error: (error as Error).message });
      }
    }
    return this.options.intervalMs ?? 10_000;
  }
}
