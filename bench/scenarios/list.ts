// 5. GET /jobs?limit=100 p99 with 1,000,000 jobs in the org, against an Express stub serving a canned page;
// and the full unpaged stream of those jobs (time, API RSS growth) against a bare pg cursor read.
import { load } from "../lib/load";
import { run, rssMb, rssSampler, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, conveyorEnv, type BenchEnv } from "../lib/setup";

/**
 * Inserts `count` jobs as the API would have: UUID v7 ids (time-ordered, one millisecond apart here), so the
 * newest jobs sit together at the end of the table as they do in production.
 */
export async function seedJobs(env: BenchEnv, count: number): Promise<void> {
  const startMs = Date.now() - count;
  for (let done = 0; done < count; done += 250_000) {
    await env.db.pool.query(
      `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at)
       SELECT (lpad(to_hex($3::bigint + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
              $1, 'webhook', (ARRAY['pending','processing','done','failed'])[1 + g % 4]::job_status,
              jsonb_build_object('url', 'https://example.com/hooks/' || g, 'payload', jsonb_build_object('n', g)), 0,
              to_timestamp(($3::bigint + g) / 1000.0), to_timestamp(($3::bigint + g) / 1000.0)
         FROM generate_series($4::bigint, $4::bigint + $2 - 1) AS g`,
      [env.orgId, Math.min(250_000, count - done), startMs, done],
    );
  }
  await env.db.pool.query("VACUUM ANALYZE jobs");
  // Do not let the seed's checkpoint land in the middle of the measurements.
  await env.db.pool.query("CHECKPOINT");
}

export async function list(env: BenchEnv, port: number, count: number, durationS: number): Promise<Row[]> {
  // Latency is read with one request in flight (what one page costs, not how long a saturated server queues
  // it; autocannon's fixed-rate mode sends bursts on this machine); throughput with 16 in flight.
  const stub = run("bench/baselines/express-stub.ts", { PORT: String(port) });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`);
  const stubPage = await load({ url: `http://127.0.0.1:${port}/jobs`, durationS, connections: 16 });
  const stubSteady = await load({ url: `http://127.0.0.1:${port}/jobs`, durationS, connections: 1 });
  await stub.stop();

  await seedJobs(env, count);
  const cursor = (await run("bench/baselines/pg-stream.ts", { DATABASE_URL: env.databaseUrl, ORG_ID: env.orgId }).result) as {
    seconds: number;
    rss_growth_mb: number;
  };

  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const url = `http://127.0.0.1:${port}/jobs`;
    await load({ url: `${url}?limit=100`, headers: { "x-api-key": env.apiKey }, durationS: 1, connections: 16 });
    const page = await load({ url: `${url}?limit=100`, headers: { "x-api-key": env.apiKey }, durationS, connections: 16 });
    const steady = await load({ url: `${url}?limit=100`, headers: { "x-api-key": env.apiKey }, durationS, connections: 1 });

    const base = rssMb(api.pid);
    const sampler = rssSampler(api.pid);
    const started = Date.now();
    const res = await fetch(url, { headers: { "x-api-key": env.apiKey } });
    let bytes = 0;
    for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
    const seconds = (Date.now() - started) / 1000;
    const growth = sampler.stop() - base;
    if (res.status !== 200 || bytes < count * 100) throw new Error(`stream answered ${res.status} with ${bytes} bytes`);

    return [
      {
        scenario: `GET /jobs?limit=100 (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: "p99 latency, one request in flight",
        conveyor: steady.p99,
        baseline: stubSteady.p99,
        baselineName: "Express stub, canned page",
        unit: "ms",
        target: "≤ 10 ms",
        met: steady.p99 <= 10,
      },
      {
        scenario: `GET /jobs?limit=100 (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: "p50 latency at saturation (16 in flight)",
        conveyor: page.p50,
        baseline: stubPage.p50,
        baselineName: "Express stub, canned page",
        unit: "ms",
      },
      {
        scenario: `GET /jobs?limit=100 (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: "p99 latency at saturation (16 in flight)",
        conveyor: page.p99,
        baseline: stubPage.p99,
        baselineName: "Express stub, canned page",
        unit: "ms",
      },
      {
        scenario: `GET /jobs?limit=100 (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: "throughput at saturation",
        conveyor: page.rps,
        baseline: stubPage.rps,
        baselineName: "Express stub, canned page",
        unit: "req/s",
      },
      {
        scenario: `GET /jobs unpaged (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: `time to stream ${(bytes / 1024 / 1024).toFixed(0)} MB`,
        conveyor: seconds,
        baseline: cursor.seconds,
        baselineName: "bare pg cursor read",
        unit: "s",
      },
      {
        scenario: `GET /jobs unpaged (${(count / 1e6).toFixed(1)} M jobs)`,
        metric: "API RSS growth",
        conveyor: growth,
        baseline: cursor.rss_growth_mb,
        baselineName: "bare pg cursor read",
        unit: "MB",
        target: "≤ 50 MB",
        met: growth <= 50,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
  }
}
