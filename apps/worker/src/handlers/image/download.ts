// Downloads an image through the SSRF guard: every redirect hop is judged again (policy, then DNS), at most
// MAX_REDIRECTS of them, never from https down to http; the body is capped while it streams.
import { PermanentJobError, RetryableJobError, type JobContext } from "@conveyor/contracts";
import { bodyExcerpt, retryAfterMs } from "../http";
import { exchangeFailure, type Deadline } from "../net/failures";
import { BodyTooLargeError, guardedRequest, isRedirect, type GuardedResponse, type SsrfGuard } from "@conveyor/net";

export const MAX_REDIRECTS = 3;

export type DownloadOptions = {
  maxBytes: number;
  time: Deadline;
  log: JobContext["log"];
};

export async function downloadImage(guard: SsrfGuard, raw: string, options: DownloadOptions): Promise<Buffer> {
  let url = guard.checkUrl(raw);
  for (let redirects = 0; ; redirects++) {
    const response = await fetchOnce(guard, url, options);
    if (!isRedirect(response.status)) return accept(url, response);
    if (redirects === MAX_REDIRECTS) throw new PermanentJobError(`${url.host} redirected again after ${MAX_REDIRECTS} redirects; giving up`);
    url = nextHop(guard, url, response);
    options.log("info", `redirected to ${url.host}`);
  }
}

async function fetchOnce(guard: SsrfGuard, url: URL, options: DownloadOptions): Promise<GuardedResponse> {
  options.log("info", `GET image from ${url.host}`);
  try {
    return await guardedRequest(guard, {
      url,
      method: "GET",
      headers: { accept: "image/png, image/jpeg, image/gif, image/bmp, */*;q=0.5", "user-agent": "Conveyor-Images/1" },
      signal: options.time.signal,
      maxBodyBytes: options.maxBytes,
      overflow: "refuse",
      onResolved: (host, addresses) => options.log("info", `${host} resolved to ${addresses.join(", ")}; connecting to the checked address`),
    });
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      const what = error.declared ? "declares a Content-Length over" : "is larger than";
      const outcome = error.declared ? "not downloaded" : "download stopped";
      throw new PermanentJobError(`the image at ${url.host} ${what} IMAGE_MAX_BYTES (${options.maxBytes} bytes); ${outcome}`);
    }
    throw exchangeFailure(error, url.host, options.time);
  }
}

function nextHop(guard: SsrfGuard, from: URL, response: GuardedResponse): URL {
  const location = response.headers.location;
  if (!location) throw new PermanentJobError(`${from.host} answered ${response.status} without a Location header`);
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new PermanentJobError(`${from.host} redirected to an invalid URL`);
  }
  if (from.protocol === "https:" && next.protocol !== "https:")
    throw new PermanentJobError(`${from.host} redirected from https to ${next.protocol.slice(0, -1)}; refused`);
  try {
    return guard.checkUrl(next.href);
  } catch (error) {
    throw new PermanentJobError(`redirect from ${from.host} refused: ${(error as Error).message}`);
  }
}

function accept(url: URL, response: GuardedResponse): Buffer {
  const { status } = response;
  if (status >= 200 && status < 300) return response.body;
  const excerpt = bodyExcerpt(response.body, 200);
  const message = `${url.host} answered ${status}${excerpt ? `: ${excerpt}` : ""}`;
  if (status === 408 || status === 429 || status >= 500) throw new RetryableJobError(message, retryAfterMs(response.headers));
  throw new PermanentJobError(message);
}
