// Tells an alert rule's channels that it fired or resolved (docs/reference/time.md#alerts, docs/reference/robustness.md#r60): a Slack-format chat webhook
// (`{text}` through the SSRF guard), e-mail through the provider the send_email handler uses (EMAIL_PROVIDER), and
// each of the organization's webhook endpoints as a signed CloudEvent `conveyor.alert.fired` / `.resolved` (Standard
// Webhooks headers, the endpoint's own secret). Each channel is sent on its own, with its own deadline and a few
// retries, and never awaited by the evaluator: one that fails or hangs delays neither the others nor the leader's
// other duties. The text carries the rule's name, its condition and the counts seen — never a payload, secret or token.
import { urlPolicy, webhookSecretsKey } from "@conveyor/config";
import { ALERT_EVENT_TYPES, type AlertChannel } from "@conveyor/contracts";
import { listSigningEndpoints, openSecret, type AlertJson } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { createSsrfGuard, type NetOptions } from "@conveyor/net";
import type pg from "pg";
import type { WorkerConfig } from "../env";
import { emailProviders } from "../handlers/email";
import { postWebhook, USER_AGENT } from "../handlers/webhook";
import { webhookSignature } from "../handlers/webhook/signature";

export type AlertNotifierOptions = {
  pool: pg.Pool;
  logger: Logger;
  settings: Pick<
    WorkerConfig,
    | "WEBHOOK_ALLOW_HTTP"
    | "ALLOW_PRIVATE_NETWORK"
    | "WEBHOOK_TIMEOUT_MS"
    | "WEBHOOK_SECRETS_KEY"
    | "EMAIL_PROVIDER"
    | "EMAIL_PROVIDER_API_KEY"
    | "EMAIL_PROVIDER_BASE_URL"
    | "EMAIL_FROM"
    | "PROVIDER_TIMEOUT_MS"
  >;
  /** Attempts per channel (default 3), `retryMs` apart and doubling (default 2 s). */
  attempts?: number;
  retryMs?: number;
  net?: NetOptions;
};

export type AlertNotice = {
  orgId: string;
  ruleId: string;
  change: "fired" | "resolved";
  alert: AlertJson;
  /** The observation of the round that changed it: a resolution says what is seen now, not what fired it. */
  observed: string;
  channels: AlertChannel[];
};

export class AlertNotifier {
  private readonly guard;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: AlertNotifierOptions) {
    this.guard = createSsrfGuard({ policy: urlPolicy(options.settings), ...options.net });
  }

  /** Starts telling every channel; returns at once. */
  notify(notice: AlertNotice): void {
    for (const channel of notice.channels) {
      const sending = this.withRetries(notice, channel).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  /** Waits (at most `ms`) for notifications under way, then abandons the rest. */
  async close(ms = 5_000): Promise<void> {
    const timer = setTimeout(() => this.stopping.abort(), ms);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(timer);
  }

  private async withRetries(notice: AlertNotice, channel: AlertChannel): Promise<void> {
    const attempts = this.options.attempts ?? 3;
    let wait = this.options.retryMs ?? 2_000;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.send(notice, channel);
        return;
      } catch (error) {
        const where = { ruleId: notice.ruleId, orgId: notice.orgId, channel: channel.kind, attempt, error: (error as Error).message };
        if (attempt >= attempts || this.stopping.signal.aborted) {
          this.options.logger.warn("alert notification failed; giving up on this channel", where);
          return;
        }
        this.options.logger.info("alert notification failed; retrying", where);
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait *= 2;
      }
    }
  }

  private async send(notice: AlertNotice, channel: AlertChannel): Promise<void> {
    const { alert, change } = notice;
    const text = change === "fired" ? `Alert fired: ${alert.summary}` : `Alert resolved: ${alert.rule_name} — now ${notice.observed} (fired ${alert.fired_at})`;
    switch (channel.kind) {
      case "chat":
        return this.post(channel.url, { text }, {});
      case "email":
        return this.email(channel.to, `[Conveyor] ${change === "fired" ? "Firing" : "Resolved"}: ${alert.rule_name}`, `${text}\n`, alert.id + change);
      case "webhook":
        return this.webhooks(notice);
    }
  }

  private async post(rawUrl: string, json: unknown, headers: Record<string, string>, body = JSON.stringify(json)): Promise<void> {
    const url = this.guard.checkUrl(rawUrl);
    const answer = await postWebhook(this.guard, {
      url,
      headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
      body,
      signal: this.stopping.signal,
      timeoutMs: this.options.settings.WEBHOOK_TIMEOUT_MS,
    });
    if (answer.failure) throw answer.failure;
  }

  private async email(to: string, subject: string, text: string, idempotencyKey: string): Promise<void> {
    const { settings } = this.options;
    const provider = emailProviders[settings.EMAIL_PROVIDER];
    if (!settings.EMAIL_PROVIDER_API_KEY || !settings.EMAIL_FROM) throw new Error("EMAIL_PROVIDER_API_KEY and EMAIL_FROM must be set for e-mail alerts");
    const deadline = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(settings.PROVIDER_TIMEOUT_MS)]);
    await provider.send(
      { to, from: settings.EMAIL_FROM, subject, text, jobId: idempotencyKey },
      {
        apiKey: settings.EMAIL_PROVIDER_API_KEY,
        baseUrl: (settings.EMAIL_PROVIDER_BASE_URL ?? provider.defaultBaseUrl).replace(/\/+$/, ""),
        timeoutMs: settings.PROVIDER_TIMEOUT_MS,
        signal: deadline,
      },
    );
  }

  /** Each enabled endpoint of the organization, each on its own (one failing endpoint does not stop the others). */
  private async webhooks(notice: AlertNotice): Promise<void> {
    const key = webhookSecretsKey(this.options.settings);
    const endpoints = await listSigningEndpoints(this.options.pool, notice.orgId);
    const type = notice.change === "fired" ? ALERT_EVENT_TYPES.fired : ALERT_EVENT_TYPES.resolved;
    const id = `alert_${notice.alert.id.replace(/-/g, "")}_${notice.change}`;
    const time = notice.change === "fired" ? notice.alert.fired_at : (notice.alert.resolved_at ?? new Date().toISOString());
    const failures = await Promise.allSettled(
      endpoints.map(async (endpoint) => {
        const body = JSON.stringify({
          specversion: "1.0",
          id,
          source: "/alert-rules",
          type,
          subject: notice.ruleId,
          time,
          datacontenttype: "application/json",
          data: notice.alert,
        });
        const timestamp = Math.floor(Date.now() / 1000);
        const secrets = [endpoint.sealedSecret, ...(endpoint.sealedPreviousSecret ? [endpoint.sealedPreviousSecret] : [])].map((s) =>
          openSecret(key, s, endpoint.id),
        );
        const signature = secrets.map((secret) => webhookSignature(secret, id, timestamp, body)).join(" ");
        await this.post(endpoint.url, null, { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature }, body);
      }),
    );
    const failed = failures.filter((f): f is PromiseRejectedResult => f.status === "rejected");
    if (failed.length)
      throw new Error(`${failed.length} of ${endpoints.length} endpoints failed: ${String((failed[0]!.reason as Error | undefined)?.message)}`);
  }
}
