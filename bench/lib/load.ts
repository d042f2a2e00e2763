// Closed-loop HTTP load with autocannon: `connections` requests kept in flight, for maximum throughput.
// Fixed-rate (open-loop) load is in fixed-rate.ts.
import autocannon from "autocannon";

export type LoadResult = { rps: number; p50: number; p99: number; errors: number; non2xx: number; total: number };

export async function load(options: {
  url: string;
  method?: "GET" | "POST";
  body?: string;
  /** A new body for each request instead of `body` (e.g. a unique key per request). */
  bodyOf?: () => string;
  headers?: Record<string, string>;
  durationS: number;
  connections?: number;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    body: options.body,
    ...(options.bodyOf && { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: options.bodyOf!() }) }] }),
    headers: { "content-type": "application/json", ...options.headers },
    duration: options.durationS,
    connections: options.connections ?? 64,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}
