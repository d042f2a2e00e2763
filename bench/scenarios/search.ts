// docs/reference/lifecycle.md#steering search. (a) GET /jobs?q= p99 with one request in flight at 1,000,000 jobs in the org, a different value
// each request, beside the unfiltered page (GET /jobs?limit=100) of the same table in the same run — what a list
// costs anyway, so the ratio says what searching adds — and beside the same searches without the GIN index, which
// says what the index buys; value prefixes (`q=ORD-1234*`, about 11 jobs each, and `q=ORD-1*`, a ninth of the table)
// beside the same unfiltered page. (b) What the index costs writers: POST /jobs sustained throughput with and without
// job_search_vector_idx, alternated twice in one API process.
import { load } from "../lib/load";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { sequential } from "../lib/sequential";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

const INDEX = "job_search_vector_idx";
const CREATE_INDEX = `CREATE INDEX IF NOT EXISTS ${INDEX} ON job_search USING GIN (conveyor_search_vector(search_values))`;

/**
 * `count` jobs with time-ordered ids and payloads whose values are searchable as the API would store them: a URL,
 * an order reference and a number per job, each unique. The GIN index is built once after the rows (faster than
 * row by row, and the same index).
 */
async function seedSearchableJobs(env: BenchEnv, count: number): Promise<void> {
  await env.db.pool.query(`DROP INDEX IF EXISTS ${INDEX}`);
  const startMs = Date.now() - count;
  for (let done = 0; done < count; done += 250_000) {
    await env.db.pool.query(
      `WITH seeded AS (
         SELECT (lpad(to_hex($3::bigint + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid AS id, g
           FROM generate_series($4::bigint, $4::bigint + $2 - 1) AS g
       ), jobs_added AS (
         INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at)
         SELECT id, $1, 'webhook', (ARRAY['pending','processing','done','failed'])[1 + g % 4]::job_status,
                jsonb_build_object('url', 'https://example.com/hooks/' || g, 'payload', jsonb_build_object('order', 'ORD-' || g, 'n', g)), 0,
                to_timestamp(($3::bigint + g) / 1000.0), to_timestamp(($3::bigint + g) / 1000.0)
           FROM seeded
       )
       INSERT INTO job_search (job_id, org_id, search_values)
       SELECT id, $1, ARRAY['https://example.com/hooks/' || g, 'ORD-' || g, g::text] FROM seeded`,
      [env.orgId, Math.min(250_000, count - done), startMs, done],
    );
  }
  await env.db.pool.query(CREATE_INDEX);
  await env.db.pool.query("VACUUM ANALYZE jobs");
  await env.db.pool.query("VACUUM ANALYZE job_search");
  await env.db.pool.query("CHECKPOINT");
}

const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } } });

/** (b) POST /jobs req/s with and without the index, A/B/A/B, each `durationS`. */
export async function searchIndexCost(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const target = { url: `http://127.0.0.1:${port}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
    await load({ ...target, durationS: 1 });
    const figures = { with: [] as number[], without: [] as number[] };
    for (const withIndex of [true, false, true, false]) {
      await env.db.pool.query(withIndex ? CREATE_INDEX : `DROP INDEX IF EXISTS ${INDEX}`);
      await env.db.pool.query("CHECKPOINT");
      const result = await load({ ...target, durationS });
      if (result.non2xx || result.errors) throw new Error(`POST /jobs answered non-2xx ${result.non2xx} times and failed ${result.errors} times`);
      figures[withIndex ? "with" : "without"].push(result.rps);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const withIndex = mean(figures.with);
    const without = mean(figures.without);
    return [
      {
        scenario: "POST /jobs, search index cost",
        metric: `sustained throughput with ${INDEX} (2 runs each, alternated)`,
        conveyor: withIndex,
        baseline: without,
        baselineName: "same API without the index",
        unit: "req/s",
        target: "≥ 0.9× without",
        met: withIndex >= 0.9 * without,
      },
    ];
  } finally {
    await api?.stop();
    await env.db.pool.query(CREATE_INDEX);
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}

/** (a) q search p99 at `count` jobs. */
export async function search(env: BenchEnv, port: number, count: number, durationS: number): Promise<Row[]> {
  await seedSearchableJobs(env, count);
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const origin = `http://127.0.0.1:${port}`;
    const headers = { "x-api-key": env.apiKey };
    // A different job's values each request, spread over the whole table.
    const pick = (i: number) => Math.floor((((i * 7_919) % 1_000_003) / 1_000_003) * count);
    const findsOne = (status: number, text: string) => {
      if (status !== 200) throw new Error(`GET /jobs?q= answered ${status}: ${text.slice(0, 200)}`);
      if ((JSON.parse(text) as unknown[]).length !== 1) throw new Error(`GET /jobs?q= found ${(JSON.parse(text) as unknown[]).length} jobs, not 1`);
    };
    const page = await sequential({ origin, path: () => "/jobs?limit=100", headers, durationS });
    const byValue = await sequential({ origin, path: (i) => `/jobs?q=ORD-${pick(i)}&limit=100`, headers, durationS, check: findsOne });
    const byNumber = await sequential({
      origin,
      path: (i) => `/jobs?q=${pick(i)}&status=done,failed,pending,processing&limit=100`,
      headers,
      durationS,
      check: findsOne,
    });
    // An order number without its last digit (ORD-12345* at 1 M jobs: ORD-12345 and ORD-123450…123459), from the
    // upper nine tenths of the numbers so every prefix is held by 11 jobs.
    const tenth = Math.floor(count / 10);
    const byPrefix = await sequential({
      origin,
      path: (i) => `/jobs?q=ORD-${Math.floor((tenth + (pick(i) % (count - tenth))) / 10)}*&limit=100`,
      headers,
      durationS,
      check: (status, text) => {
        if (status !== 200) throw new Error(`GET /jobs?q= answered ${status}: ${text.slice(0, 200)}`);
        const items = JSON.parse(text) as { matched?: string }[];
        if (items.length !== 11 || items.some((item) => item.matched !== "payload.payload.order")) {
          throw new Error(`GET /jobs?q=ORD-…* found ${items.length} jobs (${items[0]?.matched}), not 11 at payload.payload.order`);
        }
      },
    });
    // A prefix a ninth of the jobs hold (ORD-1* … ORD-9*): more than 1,000 hits, so the list takes the plain condition.
    const byCommonPrefix = await sequential({
      origin,
      path: (i) => `/jobs?q=ORD-${1 + (i % 9)}*&limit=100`,
      headers,
      durationS,
      check: (status, text) => {
        if (status !== 200) throw new Error(`GET /jobs?q= answered ${status}: ${text.slice(0, 200)}`);
        if ((JSON.parse(text) as unknown[]).length !== 100) throw new Error(`GET /jobs?q=ORD-n* found ${(JSON.parse(text) as unknown[]).length} jobs, not 100`);
      },
    });

    await env.db.pool.query(`DROP INDEX ${INDEX}`);
    const unindexed = await sequential({
      origin,
      path: (i) => `/jobs?q=ORD-${pick(i)}&limit=100`,
      headers,
      durationS: Math.min(durationS, 4),
      check: findsOne,
      warmup: 1,
    });

    const scenario = `GET /jobs?q= (${(count / 1e6).toFixed(2)} M jobs)`;
    return [
      {
        scenario,
        metric: "p99, payload string, one request in flight",
        conveyor: byValue.p99,
        baseline: page.p99,
        baselineName: "GET /jobs?limit=100, no filter",
        unit: "ms",
        target: "≤ 50 ms",
        met: byValue.p99 <= 50,
      },
      {
        scenario,
        metric: "p99, payload number + 4 statuses, one in flight",
        conveyor: byNumber.p99,
        baseline: page.p99,
        baselineName: "GET /jobs?limit=100, no filter",
        unit: "ms",
        target: "≤ 50 ms",
        met: byNumber.p99 <= 50,
      },
      {
        scenario,
        metric: "p99, value prefix held by 11 jobs (ORD-1234*), one in flight",
        conveyor: byPrefix.p99,
        baseline: page.p99,
        baselineName: "GET /jobs?limit=100, no filter",
        unit: "ms",
        target: "≤ 50 ms",
        met: byPrefix.p99 <= 50,
      },
      {
        scenario,
        metric: `p50, value prefix held by 11 jobs (${byPrefix.count} requests)`,
        conveyor: byPrefix.p50,
        baseline: page.p50,
        baselineName: "GET /jobs?limit=100, no filter",
        unit: "ms",
      },
      {
        scenario,
        metric: "p99, value prefix held by a ninth of the jobs (ORD-1*), one in flight",
        conveyor: byCommonPrefix.p99,
        baseline: page.p99,
        baselineName: "GET /jobs?limit=100, no filter",
        unit: "ms",
      },
      {
        scenario,
        metric: `p50, payload string (${byValue.count} requests)`,
        conveyor: byValue.p50,
        baseline: unindexed.p50,
        baselineName: `same searches without ${INDEX} (${unindexed.count} requests)`,
        unit: "ms",
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await env.db.pool.query(CREATE_INDEX);
  }
}
