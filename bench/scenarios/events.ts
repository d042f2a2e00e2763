// Events (issue 16), two figures:
//   the cost of writing them — worker throughput (no-op plugin, queued → done) with every status change writing its
//     event, against the same run with event rows neither rendered nor stored (a bench-only BEFORE INSERT trigger
//     discards them and conveyor_job_data() returns {}; the statements are otherwise the same, so the trigger call
//     and the id function stay in the baseline and the cost is, if anything, understated). Runs alternate
//     with, without, with, without; the best of each counts.
//   server-sent events — `clients` streams on one API process, spread over `orgs` organizations, while `rate` events
//     a second are written (job.created, round-robin over the orgs): p99 from the event's time to its arrival at a
//     client, and the API's RSS growth; beside a bare Node server that forwards Postgres NOTIFY payloads to the same
//     clients (no event table, horizon, authentication or filters: the floor of "Postgres to SSE").
import http from "node:http";
import { randomBytes } from "node:crypto";
import { createParser } from "eventsource-parser";
import { insertJobs, newId } from "@conveyor/db";
import { run, rssMb, rssSampler, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, insertOrgWithKey, type BenchEnv } from "../lib/setup";
import { drainNoopJobs, NOOP_PLUGIN } from "./worker";

const percentile = (values: number[], p: number) =>
  values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]! : NaN;

// ---- the cost of writing events ---------------------------------------------------------------------------------

const EVENTS_OFF = `
  CREATE FUNCTION conveyor_bench_discard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
  CREATE TRIGGER conveyor_bench_no_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION conveyor_bench_discard();
  ALTER FUNCTION conveyor_job_data(jobs) RENAME TO conveyor_job_data_bench_saved;
  CREATE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT '{}'::jsonb $$;`;
const EVENTS_ON = `
  DROP TRIGGER conveyor_bench_no_events ON events;
  DROP FUNCTION conveyor_bench_discard();
  DROP FUNCTION conveyor_job_data(jobs);
  ALTER FUNCTION conveyor_job_data_bench_saved(jobs) RENAME TO conveyor_job_data;`;

async function workerRun(env: BenchEnv, port: number, jobs: number, concurrency: number): Promise<number> {
  let proc: Child | undefined;
  try {
    proc = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: NOOP_PLUGIN, WORKER_CONCURRENCY: String(concurrency), WORKER_METRICS_PORT: String(port) }),
    );
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    await sleep(1_500);
    return await drainNoopJobs(env, jobs);
  } finally {
    await proc?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}

export async function eventWriteCost(env: BenchEnv, port: number, jobs: number, concurrency = 100): Promise<Row[]> {
  const withEvents: number[] = [];
  const without: number[] = [];
  for (const events of [true, false, true, false]) {
    if (!events) await env.db.pool.query(EVENTS_OFF);
    try {
      (events ? withEvents : without).push(await workerRun(env, port, jobs, concurrency));
      if (!events) {
        const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM events");
        if (rows[0]!.n !== "0") throw new Error("the events-off run wrote events: the baseline is not what it claims");
      }
    } finally {
      if (!events) await env.db.pool.query(EVENTS_ON);
    }
  }
  const on = Math.max(...withEvents);
  const off = Math.max(...without);
  return [
    {
      scenario: "Events: cost of writing them",
      metric: `worker queued → done (no-op, concurrency ${concurrency}), 3 events per job, best of 2`,
      conveyor: on,
      baseline: off,
      baselineName: "same run, event rows discarded",
      unit: "jobs/s",
      target: "≥ 0.9× (at most 10 % slower)",
      met: on >= 0.9 * off,
    },
  ];
}

// ---- server-sent events ------------------------------------------------------------------------------------------

export type SseOptions = { clients: number; orgs: number; rate: number; seconds: number };

type Clients = { latencies: number[]; received: number; close(): void };

/** Opens `count` streams at `url`, each with the headers of its org; measures every event's delay from its `time`. */
async function openClients(url: string, headersOf: (i: number) => Record<string, string>, count: number, measureFrom: () => number): Promise<Clients> {
  const latencies: number[] = [];
  const requests: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let received = 0;
  const opened = Array.from(
    { length: count },
    (_, i) =>
      new Promise<void>((resolve, reject) => {
        const request = http.get(url, { agent, headers: { Accept: "text/event-stream", ...headersOf(i) } }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
          res.setEncoding("utf8");
          const parser = createParser({
            onEvent(event) {
              const at = Date.now();
              const time = Date.parse((JSON.parse(event.data) as { time: string }).time);
              received++;
              if (time >= measureFrom()) latencies.push(at - time);
            },
          });
          res.on("data", (chunk: string) => parser.feed(chunk));
          res.on("error", () => {});
          resolve();
        });
        request.on("error", reject);
        requests.push(request);
      }),
  );
  // Not all at once: a thousand simultaneous connects measure the listen backlog, not the streams.
  for (let i = 0; i < opened.length; i += 100) await Promise.all(opened.slice(i, i + 100));
  return {
    latencies,
    get received() {
      return received;
    },
    close() {
      for (const request of requests) request.destroy();
      agent.destroy();
    },
  };
}

/** Writes `rate` events a second for `seconds` (plus one of warm-up), in 10 ms ticks, round-robin over `write`'s orgs. */
async function generate(rate: number, seconds: number, write: (count: number, at: Date) => Promise<void>): Promise<{ written: number }> {
  const started = Date.now();
  const total = Math.round(rate * (seconds + 1));
  let written = 0;
  const inFlight: Promise<void>[] = [];
  while (written < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) * rate) / 1000));
    if (due > written) {
      const count = due - written;
      written = due;
      inFlight.push(write(count, new Date()));
    }
    await sleep(10);
  }
  await Promise.all(inFlight);
  return { written };
}

async function benchOrgs(env: BenchEnv, count: number): Promise<{ orgId: string; apiKey: string }[]> {
  const orgs: { orgId: string; apiKey: string }[] = [];
  for (let i = 0; i < count; i++) {
    const orgId = newId();
    const userId = newId();
    const apiKey = `cvk_${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
    await insertOrgWithKey(env.db, { orgId, orgName: `Bench SSE ${i}`, userId, email: `sse-${i}-${orgId}@example.test`, apiKey });
    orgs.push({ orgId, apiKey });
  }
  return orgs;
}

type SseResult = { p50: number; p99: number; rssGrowth: number; delivered: number; expected: number };

async function conveyorSse(env: BenchEnv, port: number, options: SseOptions): Promise<SseResult> {
  const orgs = await benchOrgs(env, options.orgs);
  let api: Child | undefined;
  let clients: Clients | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    await sleep(1_000);
    const before = rssMb(api.pid);
    const sampler = rssSampler(api.pid);
    let measuredFrom = Infinity;
    clients = await openClients(
      `http://127.0.0.1:${port}/events`,
      (i) => ({ "X-API-Key": orgs[i % orgs.length]!.apiKey }),
      options.clients,
      () => measuredFrom,
    );
    // The first second of events warms up; latencies count from then on.
    measuredFrom = Date.now() + 1_000;
    let next = 0;
    const result = await generate(options.rate, options.seconds, async (count, at) => {
      const jobs = Array.from({ length: count }, () => ({
        id: newId(),
        orgId: orgs[next++ % orgs.length]!.orgId,
        type: "bench_noop",
        payloadJson: "{}",
        maxRetries: 0,
        createdAt: at,
      }));
      await insertJobs(env.db.pool, jobs);
    });
    const expected = result.written * (options.clients / options.orgs);
    const deadline = Date.now() + 10_000;
    while (clients.received < expected && Date.now() < deadline) await sleep(50);
    const peak = sampler.stop();
    return {
      p50: percentile(clients.latencies, 50),
      p99: percentile(clients.latencies, 99),
      rssGrowth: peak - before,
      delivered: clients.received,
      expected,
    };
  } finally {
    clients?.close();
    await api?.stop();
    await clearJobs(env.db);
  }
}

async function baselineSse(env: BenchEnv, port: number, options: SseOptions): Promise<SseResult> {
  const channel = `bench_sse_${randomBytes(3).toString("hex")}`;
  let server: Child | undefined;
  let clients: Clients | undefined;
  try {
    server = run("bench/baselines/sse-notify.ts", { DATABASE_URL: env.databaseUrl, PORT: String(port), CHANNEL: channel });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    await sleep(1_000);
    const before = rssMb(server.pid);
    const sampler = rssSampler(server.pid);
    let measuredFrom = Infinity;
    clients = await openClients(
      `http://127.0.0.1:${port}/events`,
      (i) => ({ "X-Org": String(i % options.orgs) }),
      options.clients,
      () => measuredFrom,
    );
    measuredFrom = Date.now() + 1_000;
    let next = 0;
    const result = await generate(options.rate, options.seconds, async (count, at) => {
      const payloads = Array.from({ length: count }, () =>
        JSON.stringify({ org: String(next++ % options.orgs), time: at.toISOString(), pad: "x".repeat(300) }),
      );
      await env.db.pool.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [channel, payloads]);
    });
    const expected = result.written * (options.clients / options.orgs);
    const deadline = Date.now() + 10_000;
    while (clients.received < expected && Date.now() < deadline) await sleep(50);
    const peak = sampler.stop();
    return { p50: percentile(clients.latencies, 50), p99: percentile(clients.latencies, 99), rssGrowth: peak - before, delivered: clients.received, expected };
  } finally {
    clients?.close();
    await server?.stop();
  }
}

export async function sseFanOut(env: BenchEnv, port: number, options: SseOptions): Promise<Row[]> {
  const base = await baselineSse(env, port, options);
  const conveyor = await conveyorSse(env, port, options);
  const shape = `${options.clients.toLocaleString("en-US")} streams in ${options.orgs} orgs, ${options.rate} events/s`;
  const complete = conveyor.delivered >= conveyor.expected;
  return [
    {
      scenario: "Server-sent events (one API process)",
      metric: `${shape}: p99 event → client${complete ? "" : ` (only ${conveyor.delivered} of ${conveyor.expected} arrived)`}`,
      conveyor: conveyor.p99,
      baseline: base.p99,
      baselineName: "bare NOTIFY → SSE server",
      unit: "ms",
      target: "≤ 250 ms, every event delivered",
      met: conveyor.p99 <= 250 && complete,
    },
    {
      scenario: "Server-sent events (one API process)",
      metric: `${shape}: p50 event → client`,
      conveyor: conveyor.p50,
      baseline: base.p50,
      baselineName: "bare NOTIFY → SSE server",
      unit: "ms",
    },
    {
      scenario: "Server-sent events (one API process)",
      metric: `${shape}: API RSS growth`,
      conveyor: conveyor.rssGrowth,
      baseline: base.rssGrowth,
      baselineName: "bare NOTIFY → SSE server",
      unit: "MB",
      target: "≤ 100 MB",
      met: conveyor.rssGrowth <= 100,
    },
  ];
}
