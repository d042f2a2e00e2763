// Latency with exactly one request in flight, where each request may differ (a search for a different value each
// time, so no answer comes from a cache the previous request warmed). autocannon repeats one URL.
import { Pool } from "undici";

export type SequentialResult = { p50: number; p99: number; max: number; count: number };

export async function sequential(options: {
  origin: string;
  /** The path of request `i`. */
  path(i: number): string;
  headers?: Record<string, string>;
  durationS: number;
  /** Throws when an answer is wrong (status, body): a fast wrong answer must not count. */
  check?(status: number, body: string, i: number): void;
  /** Requests sent first and not counted. Default 20. */
  warmup?: number;
}): Promise<SequentialResult> {
  const pool = new Pool(options.origin, { connections: 1, pipelining: 1 });
  const latencies: number[] = [];
  try {
    const send = async (i: number) => {
      const started = performance.now();
      const res = await pool.request({ path: options.path(i), method: "GET", headers: options.headers });
      const body = await res.body.text();
      const took = performance.now() - started;
      options.check?.(res.statusCode, body, i);
      return took;
    };
    let i = 0;
    for (; i < (options.warmup ?? 20); i++) await send(i);
    const until = performance.now() + options.durationS * 1000;
    while (performance.now() < until) latencies.push(await send(i++));
  } finally {
    await pool.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! : Number.NaN);
  return { p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? Number.NaN, count: latencies.length };
}
