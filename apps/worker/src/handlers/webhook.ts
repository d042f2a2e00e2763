// webhook: POSTs the payload's JSON to a user-supplied URL through the SSRF guard, with Standard Webhooks
// headers. Never follows redirects; 2xx is success, 429/5xx/network/timeout retry, other statuses are final.
import { urlPolicy } from "@conveyor/config";
import { PermanentJobError, RetryableJobError, type JobHandler, type WebhookPayload } from "@conveyor/contracts";
import { bodyExcerpt, retryAfterMs } from "./http";
import { deadline, exchangeFailure } from "./net/failures";
import { createSsrfGuard, guardedRequest, type GuardedResponse, type NetOptions, type ResolvedListener, type SsrfGuard } from "@conveyor/net";
import type { HandlerDeps } from "./types";
import { webhookHeaders, webhookId } from "./webhook/signature";

/** Response bytes read at most; the rest is never downloaded. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const EXCERPT_CHARS = 200;
export const USER_AGENT = "Conveyor-Webhooks/1";

export function webhookHandler(deps: HandlerDeps, net: NetOptions = {}): JobHandler<WebhookPayload> {
  const { WEBHOOK_SIGNING_SECRET: secret, WEBHOOK_TIMEOUT_MS: timeoutMs } = deps.settings;
  const guard = createSsrfGuard({ policy: urlPolicy(deps.settings), ...net });

  return async (payload, ctx) => {
    const url = guard.checkUrl(payload.url);
    const target = url.host;
    const id = webhookId(ctx.jobId);
    // With include_dependencies (docs/reference/lifecycle.md#dependencies), the jobs this one waited for ride along, as the handler sees them.
    const body = JSON.stringify(payload.include_dependencies ? { ...payload.payload, dependencies: ctx.dependencies } : payload.payload);
    const headers = {
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      ...webhookHeaders({ id, timestamp: Math.floor(Date.now() / 1000), body, secret }),
    };
    ctx.log("info", `POST to ${target} (${Buffer.byteLength(body)} bytes, ${secret ? "signed" : "unsigned"}, webhook-id ${id})`);

    const answer = await postWebhook(guard, {
      url,
      headers,
      body,
      signal: ctx.signal,
      timeoutMs,
      onResolved: (host, addresses) => ctx.log("info", `${host} resolved to ${addresses.join(", ")}; connecting to the checked address`),
    });
    if (answer.failure) throw answer.failure;

    ctx.log(
      "info",
      `${target} answered ${answer.status} in ${answer.durationMs} ms${answer.truncated ? " (response over 64 KiB; the rest was not read)" : ""}`,
    );
    return { status: answer.status, webhook_id: id, ...(answer.excerpt ? { response_excerpt: answer.excerpt } : {}), duration_ms: answer.durationMs };
  };
}

export type WebhookPost = {
  /** Already judged by `guard.checkUrl`. */
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** The job's signal: its abort is rethrown as it is, for the runtime to handle. */
  signal: AbortSignal;
  /** Total time for connecting, sending and reading the answer. */
  timeoutMs: number;
  onResolved?: ResolvedListener;
};

export type WebhookExchange = {
  /** The receiver's status, or null when none came. */
  status: number | null;
  durationMs: number;
  /** A short single-line excerpt of the answer's body. */
  excerpt: string;
  /** The answer's body as read (at most 64 KiB), or null when no answer came. */
  body: Buffer | null;
  truncated: boolean;
  /** The job error to throw (retryable or permanent), or null for a 2xx. */
  failure: Error | null;
};

/**
 * One POST to a user-supplied URL through the SSRF guard, never following redirects, classified as docs/reference/providers.md#retry-matrix
 * says: 2xx delivered; 408, 429, 5xx, network errors and the deadline retry (honouring Retry-After); other answers
 * and guard refusals are final. Resolves whatever the receiver did, so callers can record the exchange.
 */
export async function postWebhook(guard: SsrfGuard, post: WebhookPost): Promise<WebhookExchange> {
  const target = post.url.host;
  const time = deadline(post.signal, post.timeoutMs);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let response: GuardedResponse;
  try {
    response = await guardedRequest(guard, {
      url: post.url,
      method: "POST",
      headers: post.headers,
      body: post.body,
      signal: time.signal,
      maxBodyBytes: MAX_RESPONSE_BYTES,
      overflow: "truncate",
      onResolved: post.onResolved,
    });
  } catch (error) {
    const failure = exchangeFailure(error, target, time);
    if (!(failure instanceof PermanentJobError || failure instanceof RetryableJobError)) throw failure;
    return { status: null, durationMs: elapsed(), excerpt: "", body: null, truncated: false, failure };
  }
  const durationMs = elapsed();
  const excerpt = bodyExcerpt(response.body, EXCERPT_CHARS);
  return {
    status: response.status,
    durationMs,
    excerpt,
    body: response.body,
    truncated: response.truncated,
    failure: statusFailure(post.url, response, excerpt),
  };
}

/** docs/reference/providers.md#retry-matrix, "Webhook delivery": null for 2xx, else the job error for the status. */
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
