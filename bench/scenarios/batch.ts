// 2. POST /jobs/batch, 1,000 jobs per request: jobs/s until every job is committed AND on its queue in
// Redis, against raw BullMQ `add` with 64 in flight.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

export async function batch(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  const baseline = (await run("bench/baselines/bullmq-add.ts", { REDIS_URL: env.redisUrl, PREFIX: `${env.prefix}-base`, DURATION_MS: String(durationS * 1000) })
    .result) as { per_second: number };

  const jobs = Array.from({ length: 1000 }, (_, i) => ({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: i } } }));
  const body = JSON.stringify({ jobs });
  let api: Child | undefined;
  const redis = new Redis(env.redisUrl);
  const queue = new Queue("webhook", { connection: redis, prefix: env.prefix });
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
    await queue.obliterate({ force: true });

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
    // Count only what is on the queue: a 202 that Redis has not received yet is not finished work.
    while ((await queue.getWaitingCount()) < sent) await new Promise((r) => setTimeout(r, 20));
    const perSecond = sent / ((Date.now() - started) / 1000);
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
    await queue.close();
    redis.disconnect();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
