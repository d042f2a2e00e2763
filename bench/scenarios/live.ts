// Progress and live results (issue 35, docs/reference/events.md#progress-and-live-results), two figures:
//   streams — `jobs` jobs (bench_progress) each reporting progress 10 times a second for `seconds`, one worker
//     process at concurrency `jobs`, each followed by its own SSE stream (GET /jobs/{id}/events?token=, a public
//     token each, as a browser's EventSource reads it) on one API process: p99 from a job.progress event's time to its
//     arrival at the stream, and how many progress events a job announced per second (≤ 4: coalesced).
//   the worker's rate — jobs of 300 ms, concurrency 300: queued → done with progress reported every 100 ms, against
//     the same jobs not reporting; runs alternate with, without, with, without and the best of each counts.
import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { createParser } from "eventsource-parser";
import { insertJobs, insertPublicToken, newId } from "@conveyor/db";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { waitUntilAllDone } from "./worker";

const PLUGIN = "bench/plugins/progress.js";

const percentile = (values: number[], p: number) =>
  values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]! : NaN;

async function queueProgressJobs(env: BenchEnv, count: number, payload: object): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(1000, count - i) }, () => ({
      id: newId(),
      orgId: env.orgId,
      type: "bench_progress",
      payloadJson: JSON.stringify(payload),
      maxRetries: 0,
      createdAt: now,
    }));
    await insertJobs(env.db.pool, batch);
    ids.push(...batch.map((j) => j.id));
  }
  return ids;
}

function startWorker(env: BenchEnv, port: number, concurrency: number): Child {
  return run(
    "apps/worker/src/main.ts",
    conveyorEnv(env, { WORKER_TYPES: "bench_progress", WORKER_PLUGINS: PLUGIN, WORKER_CONCURRENCY: String(concurrency), WORKER_METRICS_PORT: String(port) }),
  );
}

/** Queues `jobs` jobs of `ms` and waits for all: jobs per second from before the first insert to the last done. */
async function drain(env: BenchEnv, jobs: number, report: boolean): Promise<number> {
  const { rows: start } = await env.db.pool.query<{ at: Date }>("SELECT clock_timestamp() AS at");
  await queueProgressJobs(env, jobs, { ms: 300, every_ms: 100, report });
  await waitUntilAllDone(env, jobs);
  const { rows: end } = await env.db.pool.query<{ at: Date }>("SELECT max(updated_at) AS at FROM jobs");
  return jobs / ((end[0]!.at.getTime() - start[0]!.at.getTime()) / 1000);
}

export async function workerRateWithProgress(env: BenchEnv, port: number, jobs: number, concurrency = 300): Promise<Row[]> {
  const rates: Record<"with" | "without", number[]> = { with: [], without: [] };
  for (const report of [true, false, true, false]) {
    let proc: Child | undefined;
    try {
      proc = startWorker(env, port, concurrency);
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      await sleep(1_000);
      rates[report ? "with" : "without"].push(await drain(env, jobs, report));
      if (report) {
        const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE type = 'job.progress'");
        if (Number(rows[0]!.n) < jobs) throw new Error(`only ${rows[0]!.n} progress events for ${jobs} jobs: the reports did not land`);
      }
    } finally {
      await proc?.stop();
      await clearJobs(env.db);
      await clearPrefix(env.prefix);
    }
  }
  const on = Math.max(...rates.with);
  const off = Math.max(...rates.without);
  return [
    {
      scenario: "Live results: worker rate",
      metric: `queued → done, ${jobs} jobs of 300 ms, concurrency ${concurrency}, progress every 100 ms, best of 2`,
      conveyor: on,
      baseline: off,
      baselineName: "same jobs, no progress reported",
      unit: "jobs/s",
      target: "≥ 0.9×",
      met: on >= 0.9 * off,
    },
  ];
}

export type LiveStreamsOptions = { jobs: number; seconds: number };

export async function liveStreams(env: BenchEnv, ports: { api: number; worker: number }, options: LiveStreamsOptions): Promise<Row[]> {
  let api: Child | undefined;
  let worker: Child | undefined;
  const requests: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api), EVENT_STREAMS_PER_ORG: "0" }));
    await waitForHttp(`http://127.0.0.1:${ports.api}/healthz`);
    // The jobs wait for the worker (whose dispatcher hands them over) until every stream is open.
    const ids = await queueProgressJobs(env, options.jobs, { ms: options.seconds * 1000, every_ms: 100, report: true });
    const { rows: owner } = await env.db.pool.query<{ user_id: string }>("SELECT user_id FROM memberships WHERE org_id = $1 LIMIT 1", [env.orgId]);
    const tokens = await Promise.all(
      ids.map(async (jobId) => {
        const token = `cvpt_${randomBytes(32).toString("base64url")}`;
        const now = new Date();
        await insertPublicToken(env.db.pool, {
          id: newId(),
          orgId: env.orgId,
          jobId,
          tokenHash: createHash("sha256").update(token).digest(),
          createdBy: owner[0]!.user_id,
          at: now,
          expiresAt: new Date(now.getTime() + 3_600_000),
        });
        return token;
      }),
    );

    const latencies: number[] = [];
    let progressEvents = 0;
    let finals = 0;
    const opened = ids.map(
      (id, i) =>
        new Promise<void>((resolve, reject) => {
          const request = http.get(
            `http://127.0.0.1:${ports.api}/jobs/${id}/events?token=${tokens[i]}`,
            { agent, headers: { Accept: "text/event-stream" } },
            (res) => {
              if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
              res.setEncoding("utf8");
              const parser = createParser({
                onEvent(event) {
                  if (event.event === "job.progress") {
                    progressEvents++;
                    latencies.push(Date.now() - Date.parse((JSON.parse(event.data) as { time: string }).time));
                  } else if (event.event === "job.succeeded") finals++;
                },
              });
              res.on("data", (chunk: string) => parser.feed(chunk));
              res.on("error", () => {});
              resolve();
            },
          );
          request.on("error", reject);
          requests.push(request);
        }),
    );
    for (let i = 0; i < opened.length; i += 100) await Promise.all(opened.slice(i, i + 100));

    worker = startWorker(env, ports.worker, options.jobs);
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    const deadline = Date.now() + (options.seconds + 120) * 1000;
    while (finals < options.jobs && Date.now() < deadline) await sleep(200);
    const { rows } = await env.db.pool.query<{ per_second: number | null }>(
      `SELECT avg((n - 1) / greatest(extract(epoch FROM last - first), 0.001))::float AS per_second
         FROM (SELECT job_id, count(*) AS n, min(time) AS first, max(time) AS last FROM events WHERE type = 'job.progress' GROUP BY job_id HAVING count(*) > 1) x`,
    );
    const shape = `${options.jobs.toLocaleString("en-US")} streams following ${options.jobs.toLocaleString("en-US")} jobs reporting 10×/s for ${options.seconds} s`;
    const complete = finals === options.jobs;
    return [
      {
        scenario: "Live results: SSE (one API process)",
        metric: `${shape}: p99 job.progress event → stream${complete ? "" : ` (only ${finals} of ${options.jobs} jobs ended)`}`,
        conveyor: percentile(latencies, 99),
        baseline: null,
        baselineName: "",
        unit: "ms",
        target: "≤ 250 ms",
        met: percentile(latencies, 99) <= 250 && complete,
      },
      {
        scenario: "Live results: SSE (one API process)",
        metric: `${shape}: p50 job.progress event → stream`,
        conveyor: percentile(latencies, 50),
        baseline: null,
        baselineName: "",
        unit: "ms",
      },
      {
        scenario: "Live results: SSE (one API process)",
        metric: `${shape}: job.progress events per job per second (${progressEvents} received)`,
        conveyor: rows[0]?.per_second ?? NaN,
        baseline: 10,
        baselineName: "reports per second",
        unit: "events/s",
        target: "≤ 4 (coalesced)",
        // n events span n − 1 intervals: the rate between the first and the last.
        met: (rows[0]?.per_second ?? Infinity) <= 4,
      },
    ];
  } finally {
    for (const request of requests) request.destroy();
    agent.destroy();
    await worker?.stop();
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
