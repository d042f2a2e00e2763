// Open-loop HTTP load at a fixed rate, wrk2-style. Request i is due at start + i/rate whatever happened to the
// earlier ones, and its latency is counted from when it was due, not from when a connection was free: a
// server that stalls is charged for every request it kept waiting (no coordinated omission). Requests are
// spread evenly over each millisecond instead of being sent in one burst per second, which is what
// autocannon's rate mode does and what made its latencies measure its own queue.
import { Pool } from "undici";
import type { LoadResult } from "./load";

export async function fixedRate(options: {
  url: string;
  method?: "GET" | "POST";
  body?: string;
  headers?: Record<string, string>;
  rate: number;
  durationS: number;
  connections: number;
  /**
   * Seconds sent at the same rate on the same connections before the measured `durationS`, and not counted:
   * connections are opened and code is warm before the first measured request. Default 0.
   */
  warmupS?: number;
}): Promise<LoadResult> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const headers = { "content-type": "application/json", ...options.headers };
  const skipped = Math.round(options.rate * (options.warmupS ?? 0));
  const total = skipped + Math.max(1, Math.round(options.rate * options.durationS));
  const latencies = new Float64Array(total).fill(Number.NaN);
  let sent = 0;
  let settled = 0;
  let errors = 0;
  let non2xx = 0;
  const start = performance.now();

  await new Promise<void>((resolve) => {
    const send = (i: number) => {
      const due = start + (i * 1000) / options.rate;
      pool
        .request({ path: url.pathname + url.search, method: options.method ?? "GET", headers, body: options.body })
        .then(async (response) => {
          if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
          await response.body.dump();
          latencies[i] = performance.now() - due;
        })
        .catch(() => errors++)
        .finally(() => {
          if (++settled === total) resolve();
        });
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * options.rate) / 1000) + 1);
      while (sent < due) send(sent++);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const elapsedS = (performance.now() - start) / 1000 - (options.warmupS ?? 0);
  await pool.close();

  const measured = Array.from(latencies.subarray(skipped).filter((l) => !Number.isNaN(l))).sort((a, b) => a - b);
  const at = (q: number) => (measured.length ? measured[Math.min(measured.length - 1, Math.floor(q * measured.length))]! : Number.NaN);
  return { rps: measured.length / elapsedS, p50: at(0.5), p99: at(0.99), errors, non2xx, total: measured.length };
}
