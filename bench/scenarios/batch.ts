// 2. POST /jobs/batch, 1,000 jobs per request: jobs/s until every job is committed in its queue — Postgres'
// job_queue, from which the dispatcher hands jobs to BullMQ (no worker runs here, so none is handed over) —
// against raw BullMQ `add` with 64 in flight.
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

export async function batch(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  const baseline = (await run("bench/baselines/bullmq-add.ts", { REDIS_URL: env.redisUrl, PREFIX: `${env.prefix}-base`, DURATION_MS: String(durationS * 1000) })
    .result) as { per_second: number };

  const jobs = Array.from({ length: 1000 }, (_, i) => ({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: i } } }));
  const body = JSON.stringify({ jobs });
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const post = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/jobs/batch`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "x-api-key": env.apiKey },
      });
      if (res.status !== 202) throw new Error(`batch answered ${res.status}`);
      await res.arrayBuffer();
    };
    await post();
    await clearJobs(env.db);

    const started = Date.now();
    const until = started + durationS * 1000;
    let sent = 0;
    // 8 requests (8,000 jobs) in flight: enough to keep the API busy while it waits on Postgres and Redis.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          await post();
          sent += 1000;
        }
      }),
    );
    // A 202 means committed, queue entry included; checked, not assumed.
    const perSecond = sent / ((Date.now() - started) / 1000);
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM job_queue");
    if (Number(rows[0]!.n) !== sent) throw new Error(`expected ${sent} queued jobs, found ${rows[0]!.n}`);
    return [
      {
        scenario: "POST /jobs/batch (1,000/request)",
        metric: "jobs committed and queued",
        conveyor: perSecond,
        baseline: baseline.per_second,
        baselineName: "BullMQ add ×64",
        unit: "jobs/s",
        target: "≥ 1.0× BullMQ add",
        met: perSecond >= baseline.per_second,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
