// docs/reference/lifecycle.md#steering bulk cancel: POST /jobs/bulk {action: "cancel", filter: {status: "pending"}} on 10,000 pending jobs made
// as POST /jobs makes them (row, place in the dispatcher's queue, job.created event), timed from request to answer;
// against one bare UPDATE of as many jobs' status in the same database — the least the change could cost, without
// the events, log lines, queue removal and statement chunking that the endpoint does.
import { BULK_LIMIT } from "@conveyor/contracts";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { queueNoopJobs } from "./worker";

const TRIALS = 3;

export async function bulkCancel(env: BenchEnv, port: number, count = BULK_LIMIT): Promise<Row[]> {
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const cancel = async (expected: number) => {
      const res = await fetch(`http://127.0.0.1:${port}/jobs/bulk`, {
        method: "POST",
        body: JSON.stringify({ action: "cancel", filter: { status: "pending" } }),
        headers: { "content-type": "application/json", "x-api-key": env.apiKey },
      });
      const result = (await res.json()) as { affected?: number };
      if (res.status !== 200 || result.affected !== expected) throw new Error(`bulk cancel answered ${res.status} ${JSON.stringify(result)}`);
    };
    // One small call first, so the API process has loaded and planned everything once.
    await queueNoopJobs(env, 10);
    await cancel(10);
    await clearJobs(env.db);

    const endpoint: number[] = [];
    const bare: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      await queueNoopJobs(env, count);
      await env.db.pool.query("VACUUM ANALYZE jobs, job_queue");
      let started = performance.now();
      await cancel(Math.min(count, BULK_LIMIT));
      endpoint.push((performance.now() - started) / 1000);
      await clearJobs(env.db);

      const ids = await queueNoopJobs(env, count);
      await env.db.pool.query("VACUUM ANALYZE jobs, job_queue");
      started = performance.now();
      await env.db.pool.query(
        "UPDATE jobs SET status = 'cancelled', finished_at = now(), updated_at = now() WHERE id = ANY($1::uuid[]) AND status = 'pending'",
        [ids],
      );
      bare.push((performance.now() - started) / 1000);
      await clearJobs(env.db);
    }
    const worst = Math.max(...endpoint);
    return [
      {
        scenario: `POST /jobs/bulk cancel (${count.toLocaleString("en-US")} pending jobs)`,
        metric: `time to answer, worst of ${TRIALS}`,
        conveyor: worst,
        baseline: Math.max(...bare),
        baselineName: "one bare UPDATE of their status",
        unit: "s",
        target: "≤ 2 s",
        met: worst <= 2,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
