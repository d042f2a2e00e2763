// webhook: POSTs the payload's JSON to a user-supplied URL through the SSRF guard, with Standard Webhooks
// headers. Never follows redirects; 2xx is success, 429/5xx/network/timeout retry, other statuses are final.
import { urlPolicy } from "@conveyor/config";
import { PermanentJobError, RetryableJobError, type JobHandler, type WebhookPayload } from "@conveyor/contracts";
import { bodyExcerpt, retryAfterMs } from "./http";
import { deadline, exchangeFailure } from "./net/failures";
import { guardedRequest, type GuardedResponse } from "./net/guarded-request";
import { createSsrfGuard, type NetOptions } from "./net/ssrf-guard";
import type { HandlerDeps } from "./types";
import { webhookHeaders, webhookId } from "./webhook/signature";

/** Response bytes read at most; the rest is never downloaded. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const EXCERPT_CHARS = 200;

export function webhookHandler(deps: HandlerDeps, net: NetOptions = {}): JobHandler<WebhookPayload> {
  const { WEBHOOK_SIGNING_SECRET: secret, WEBHOOK_TIMEOUT_MS: timeoutMs } = deps.settings;
  const guard = createSsrfGuard({ policy: urlPolicy(deps.settings), ...net });

  return async (payload, ctx) => {
    const url = guard.checkUrl(payload.url);
    const target = url.host;
    const id = webhookId(ctx.jobId);
    const body = JSON.stringify(payload.payload);
    const headers = {
      "content-type": "application/json",
      "user-agent": "Conveyor-Webhooks/1",
      ...webhookHeaders({ id, timestamp: Math.floor(Date.now() / 1000), body, secret }),
    };
    ctx.log("info", `POST to ${target} (${Buffer.byteLength(body)} bytes, ${secret ? "signed" : "unsigned"}, webhook-id ${id})`);

    const time = deadline(ctx.signal, timeoutMs);
    const started = performance.now();
    let response: GuardedResponse;
    try {
      response = await guardedRequest(guard, {
        url,
        method: "POST",
        headers,
        body,
        signal: time.signal,
        maxBodyBytes: MAX_RESPONSE_BYTES,
        overflow: "truncate",
        onResolved: (host, addresses) => ctx.log("info", `${host} resolved to ${addresses.join(", ")}; connecting to the checked address`),
      });
    } catch (error) {
      throw exchangeFailure(error, target, time);
    }
    const durationMs = Math.round(performance.now() - started);
    const excerpt = bodyExcerpt(response.body, EXCERPT_CHARS);
    const failure = statusFailure(url, response, excerpt);
    if (failure) throw failure;

    ctx.log("info", `${target} answered ${response.status} in ${durationMs} ms${response.truncated ? " (response over 64 KiB; the rest was not read)" : ""}`);
    return { status: response.status, webhook_id: id, ...(excerpt ? { response_excerpt: excerpt } : {}), duration_ms: durationMs };
  };
}

/** PROVIDERS.md §8, "Webhook delivery": null for 2xx, else the job error for the status. */
function statusFailure(url: URL, response: GuardedResponse, excerpt: string): Error | null {
  const { status } = response;
  const target = url.host;
  if (status >= 200 && status < 300) return null;
  const detail = excerpt ? `: ${excerpt}` : "";
  if (status >= 300 && status < 400) {
    const location = response.headers.location ? ` to ${safeLocation(response.headers.location, url)}` : "";
    return new PermanentJobError(`${target} answered ${status} (a redirect${location}); webhooks never follow redirects, so point the job at the final URL`);
  }
  if (status === 410) return new PermanentJobError(`${target} answered 410: endpoint gone${detail}`);
  if (status === 408 || status === 429 || status >= 500) return new RetryableJobError(`${target} answered ${status}${detail}`, retryAfterMs(response.headers));
  return new PermanentJobError(`${target} answered ${status}${detail}`);
}

/** Where a redirect pointed, as origin only: its path and query may carry someone's token. */
function safeLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).origin;
  } catch {
    return "an unparseable location";
  }
}
