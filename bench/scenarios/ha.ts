// High availability (docs/reference/high-availability.md#high-availability). `pgbouncer`: POST /jobs and the worker with DATABASE_URL through PgBouncer 1.18 in
// transaction mode (unnamed statements, sessions on DATABASE_DIRECT_URL) against the same straight to Postgres,
// alternated on the same database. `failover`: a private primary and a streaming replica, the API and a worker on
// the multi-host URL, about 200 POST /jobs per second; the primary stopped at once and the replica promoted — the
// time from the stop to the first job acknowledged by the new primary, and (asynchronous replication) how many
// acknowledged jobs the new primary lacks and how far before the stop they were acknowledged.
import { withDatabaseName } from "@conveyor/db";
import { startPgBouncer, startReplicatedPostgres } from "@conveyor/testkit";
import { load } from "../lib/load";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, prepare, type BenchEnv } from "../lib/setup";
import { drainNoopJobs, NOOP_PLUGIN } from "./worker";

const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } } });

export async function throughPgBouncer(env: BenchEnv, port: number, durationS: number, jobs: number, concurrency: number): Promise<Row[]> {
  const pooler = await startPgBouncer({ poolSize: 20 });
  const name = new URL(env.databaseUrl).pathname.slice(1);
  const via = {
    direct: {},
    pooler: { DATABASE_URL: pooler.url(name), DATABASE_DIRECT_URL: env.databaseUrl },
  } as const;
  const post = { direct: [] as number[], pooler: [] as number[] };
  const work = { direct: [] as number[], pooler: [] as number[] };
  try {
    // Alternated, twice each, so a neighbour's load on this shared machine falls on both alike.
    for (const round of [0, 1]) {
      for (const mode of round === 0 ? (["direct", "pooler"] as const) : (["pooler", "direct"] as const)) {
        const api: Child = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port), ...via[mode] }));
        try {
          await waitForHttp(`http://127.0.0.1:${port}/healthz`);
          const target = { url: `http://127.0.0.1:${port}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
          await load({ ...target, durationS: 1 });
          const result = await load({ ...target, durationS });
          if (result.non2xx || result.errors) throw new Error(`POST /jobs (${mode}) answered non-2xx ${result.non2xx} times, failed ${result.errors}`);
          post[mode].push(result.rps);
        } finally {
          await api.stop();
          await clearJobs(env.db);
        }
        const worker: Child = run(
          "apps/worker/src/main.ts",
          conveyorEnv(env, {
            WORKER_TYPES: "bench_noop",
            WORKER_PLUGINS: NOOP_PLUGIN,
            WORKER_CONCURRENCY: String(concurrency),
            WORKER_METRICS_PORT: String(port),
            ...via[mode],
          }),
        );
        try {
          await waitForHttp(`http://127.0.0.1:${port}/healthz`);
          await sleep(1000);
          work[mode].push(await drainNoopJobs(env, jobs));
        } finally {
          await worker.stop();
          await clearJobs(env.db);
          await clearPrefix(env.prefix);
        }
      }
    }
  } finally {
    await pooler.stop();
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const row = (scenario: string, metric: string, values: { direct: number[]; pooler: number[] }, unit: string): Row => ({
    scenario,
    metric,
    conveyor: mean(values.pooler),
    baseline: mean(values.direct),
    baselineName: "same, straight to Postgres (named statements)",
    unit,
    target: "≥ 0.9× direct",
    met: mean(values.pooler) >= 0.9 * mean(values.direct),
  });
  return [
    row("PgBouncer (transaction mode)", "POST /jobs sustained, through PgBouncer", post, "req/s"),
    row("PgBouncer (transaction mode)", `worker queued → done, concurrency ${concurrency}, through PgBouncer`, work, "jobs/s"),
  ];
}

type Ack = { id: string; at: number };

export async function failover(port: number, synchronous: boolean): Promise<Row[]> {
  const pair = await startReplicatedPostgres({ synchronous });
  let env: BenchEnv | undefined;
  const children: Child[] = [];
  try {
    env = await prepare(pair.primary.url("postgres"));
    const name = new URL(env.databaseUrl).pathname.slice(1);
    const url = pair.failoverUrl(name);
    const api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port), DATABASE_URL: url }));
    children.push(api);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    children.push(run("apps/worker/src/main.ts", conveyorEnv(env, { DATABASE_URL: url, WORKER_METRICS_PORT: "0", WORKER_CONCURRENCY: "50" })));

    const acks: Ack[] = [];
    const statuses = new Map<number, number>();
    let sending = true;
    const lane = async (n: number) => {
      for (let i = 0; sending; i++) {
        const started = Date.now();
        const res = await fetch(`http://127.0.0.1:${port}/jobs`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-API-Key": env!.apiKey, "Idempotency-Key": `bench-${n}-${i}` },
          body,
        }).catch(() => null);
        if (!res) continue;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const answer = (await res.json()) as { id?: string };
        if (res.status === 202 || res.status === 200) acks.push({ id: answer.id!, at: Date.now() });
        await sleep(Math.max(0, 40 - (Date.now() - started)));
      }
    };
    const lanes = Array.from({ length: 8 }, (_, n) => lane(n));
    await sleep(5_000);
    const stoppedAt = Date.now();
    await pair.primary.stop();
    await pair.promote();
    const promotedAt = Date.now();
    const deadline = Date.now() + 60_000;
    while (!acks.some((a) => a.at > promotedAt) && Date.now() < deadline) await sleep(20);
    const firstAck = acks.find((a) => a.at > promotedAt);
    await sleep(2_000);
    sending = false;
    await Promise.all(lanes);

    const before = acks.filter((a) => a.at <= stoppedAt);
    const { rows } = await env.db.pool.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1::uuid[])", [before.map((a) => a.id)]).catch(async () => {
      // env.db points at the old primary: read the promoted one.
      const pg = await import("pg");
      const client = new pg.default.Client({ connectionString: withDatabaseName(pair.replica.url("postgres"), name) });
      await client.connect();
      try {
        return await client.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1::uuid[])", [before.map((a) => a.id)]);
      } finally {
        await client.end();
      }
    });
    const kept = new Set(rows.map((r) => r.id));
    const lost = before.filter((a) => !kept.has(a.id));
    const window = lost.length ? stoppedAt - Math.min(...lost.map((a) => a.at)) : 0;
    process.stdout.write(
      `  failover (${synchronous ? "synchronous" : "asynchronous"}): statuses ${JSON.stringify(Object.fromEntries(statuses))}; promotion ${promotedAt - stoppedAt} ms; ` +
        `${before.length} acknowledged before the stop, ${lost.length} lost\n`,
    );
    const kind = synchronous ? "synchronous replica" : "asynchronous replica";
    const out: Row[] = [
      {
        scenario: "Postgres failover",
        metric: `primary stopped → first acknowledged job on the promoted ${kind} (promotion included)`,
        conveyor: firstAck ? firstAck.at - stoppedAt : NaN,
        baseline: promotedAt - stoppedAt,
        baselineName: "pg_ctl promote alone",
        unit: "ms",
        target: "≤ 30,000 ms",
        met: firstAck !== undefined && firstAck.at - stoppedAt <= 30_000,
      },
      {
        scenario: "Postgres failover",
        metric: `acknowledged jobs lost (${kind}, of ${before.length}); 500s answered: ${statuses.get(500) ?? 0}`,
        conveyor: lost.length,
        baseline: null,
        baselineName: "",
        unit: "jobs",
        ...(synchronous ? { target: "0", met: lost.length === 0 && !statuses.has(500) } : {}),
      },
    ];
    if (!synchronous)
      out.push({
        scenario: "Postgres failover",
        metric: "loss window: stop − earliest lost acknowledgement",
        conveyor: window,
        baseline: null,
        baselineName: "",
        unit: "ms",
      });
    return out;
  } finally {
    for (const child of children) await child.stop().catch(() => {});
    // The database goes with the pair's folders; only Redis keeps something to remove.
    await env?.db.close().catch(() => {});
    if (env) await clearPrefix(env.prefix);
    await pair.destroy();
  }
}
