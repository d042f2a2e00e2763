// Tenants (issue 36, docs/reference/tenants.md#usage-quotas-and-backpressure), each figure beside a same-run baseline:
//   POST /jobs with every quota in force (jobs per day and month, pending jobs, payload bytes; limits far above what
//     the run reaches, so every request pays the check and none is refused) ≥ 0.95× POST /jobs with no quota. Usage
//     metering is in both: the statements that create, start and end jobs count it themselves
//     (docs/decisions/2026-12-06-usage-counted-by-statements.md, 2026-12-07-jobs-created-counted-by-statement.md),
//     so there is no run without it to compare with any more (the triggers this row once switched off are gone). Runs
//     alternate in rounds (no quota, three quotas, all four), the order rotated each round so that every mode runs once
//     in every position, each on emptied tables after a fresh API start; a row is the median of its runs beside the
//     median of the runs without (one run moves ±10 % on this machine; a best-of-two could land on either side);
//   GET /usage over 400 days × 8 types, by day and by type, p99 ≤ 50 ms, with 1,000,000 jobs' worth of usage seeded
//     directly into usage_counts, beside 200 other organizations' 400 days × 8 types: first in all 16 stripes of every
//     day (nothing folded yet; no target), then after the leader's fold (finished days in one row each; the target).
import { foldUsage, newId } from "@conveyor/db";
import { load } from "../lib/load";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, loginToken, type BenchEnv } from "../lib/setup";

const PERIOD_QUOTAS = { QUOTA_JOBS_PER_DAY: "1000000000", QUOTA_JOBS_PER_MONTH: "10000000000", QUOTA_PAYLOAD_BYTES_MAX: "1000000000000" };
const QUOTAS = { ...PERIOD_QUOTAS, QUOTA_PENDING_MAX: "10000000" };

async function emptyTables(env: BenchEnv): Promise<void> {
  await clearJobs(env.db);
  await env.db.pool.query("TRUNCATE usage_counts, stored_payload_bytes, quota_blocks");
  await clearPrefix(env.prefix);
}

export async function tenantsPost(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  const url = `http://127.0.0.1:${port}/jobs`;
  const headers = { "x-api-key": env.apiKey };
  const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42 } } });
  const measure = async (mode: "none" | "three" | "quotas"): Promise<number> => {
    let api: Child | undefined;
    try {
      await emptyTables(env);
      api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port), ...(mode === "quotas" ? QUOTAS : mode === "three" ? PERIOD_QUOTAS : {}) }));
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      await load({ url, method: "POST", body, headers, durationS: 1 });
      const result = await load({ url, method: "POST", body, headers, durationS });
      if (result.non2xx) throw new Error(`${mode}: ${result.non2xx} requests were refused`);
      return result.rps;
    } finally {
      await api?.stop();
    }
  };
  const modes = ["none", "three", "quotas"] as const;
  const runs: Record<(typeof modes)[number], number[]> = { none: [], three: [], quotas: [] };
  try {
    for (let round = 0; round < modes.length; round++) {
      for (let i = 0; i < modes.length; i++) {
        const mode = modes[(round + i) % modes.length]!;
        runs[mode].push(await measure(mode));
      }
    }
  } finally {
    await emptyTables(env);
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const best = { none: median(runs.none), three: median(runs.three), quotas: median(runs.quotas) };
  process.stdout.write(`tenants runs (req/s): ${modes.map((mode) => `${mode} ${runs[mode].map(Math.round).join(", ")}`).join("; ")}\n`);
  const row = (metric: string, value: number): Row => ({
    scenario: "POST /jobs (tenants)",
    metric,
    conveyor: value,
    baseline: best.none,
    baselineName: "no quota, usage metered (medians of 3 alternated runs)",
    unit: "req/s",
    target: "≥ 0.95×",
    met: value >= 0.95 * best.none,
  });
  return [
    row("… with metering and the jobs per day, per month and payload bytes quotas", best.three),
    row("… with metering and all four quotas (pending_max counts the pending jobs on each post)", best.quotas),
  ];
}

export async function tenantsUsage(env: BenchEnv, port: number, durationS: number, jobs = 1_000_000): Promise<Row[]> {
  let api: Child | undefined;
  const ownerId = newId();
  try {
    await env.db.pool.query("TRUNCATE usage_counts");
    await env.db.pool.query(`INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'unused')`, [ownerId, `usage-${ownerId}@example.test`]);
    await env.db.pool.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'admin')`, [env.orgId, ownerId]);
    // The bench organization: 400 days × 8 types × 16 stripes, `jobs` jobs in all, up to yesterday.
    const rows = 400 * 8 * 16;
    await env.db.pool.query(
      `INSERT INTO usage_counts (org_id, day, type, stripe, jobs_created, attempts_started, attempt_ms, webhook_deliveries, payload_bytes)
       SELECT $1, current_date - 1 - d, 'type_' || t, s, $2::bigint, $2::bigint + 1, $2::bigint * 1234, 1, $2::bigint * 180
         FROM generate_series(0, 399) d, generate_series(1, 8) t, generate_series(0, 15) s`,
      [env.orgId, Math.ceil(jobs / rows)],
    );
    // Others around it.
    const others = Array.from({ length: 200 }, () => newId());
    await env.db.pool.query(`INSERT INTO organizations (id, name) SELECT id, 'usage other' FROM unnest($1::uuid[]) AS id`, [others]);
    await env.db.pool.query(
      `INSERT INTO usage_counts (org_id, day, type, stripe, jobs_created, attempts_started, attempt_ms, webhook_deliveries, payload_bytes)
       SELECT o, current_date - 1 - d, 'type_' || t, 0, 10, 11, 12345, 0, 1800
         FROM unnest($1::uuid[]) o, generate_series(0, 399) d, generate_series(1, 8) t`,
      [others],
    );
    await env.db.pool.query("VACUUM ANALYZE usage_counts");

    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const token = await loginToken(env, `http://127.0.0.1:${port}`, ownerId);
    const to = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const from = new Date(Date.now() - 400 * 86_400_000).toISOString().slice(0, 10);
    const headers = { authorization: `Bearer ${token}` };
    const out: Row[] = [];
    const measure = async (groupBy: "day" | "type", folded: boolean) => {
      const url = `http://127.0.0.1:${port}/usage?from=${from}&to=${to}&group_by=${groupBy}`;
      const check = await fetch(url, { headers });
      const answer = (await check.json()) as { jobs_created: number }[];
      if (check.status !== 200 || answer.length !== (groupBy === "day" ? 400 : 8)) throw new Error(`GET /usage: ${check.status}, ${answer.length} rows`);
      await load({ url, headers, durationS: 1, connections: 1 });
      const result = await load({ url, headers, durationS, connections: 1 });
      out.push({
        scenario: "GET /usage (1 M jobs' usage over 400 days × 8 types)",
        metric: folded
          ? `p99, 400 days, group_by=${groupBy}, one at a time, finished days folded (the leader's fold)`
          : `p99, 400 days, group_by=${groupBy}, one at a time, all 16 stripes of every day (before any fold)`,
        conveyor: result.p99,
        baseline: null,
        baselineName: "",
        unit: "ms",
        ...(folded ? { target: "≤ 50 ms", met: result.p99 <= 50 } : {}),
      });
    };
    for (const groupBy of ["day", "type"] as const) await measure(groupBy, false);
    // The leader's fold: every day before yesterday down to one row per day and type.
    while ((await foldUsage(env.db.pool, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10))) > 0);
    await env.db.pool.query("VACUUM ANALYZE usage_counts");
    for (const groupBy of ["day", "type"] as const) await measure(groupBy, true);
    return out;
  } finally {
    await api?.stop();
    await env.db.pool.query("TRUNCATE usage_counts");
    await env.db.pool.query("DELETE FROM memberships WHERE user_id = $1", [ownerId]);
  }
}
