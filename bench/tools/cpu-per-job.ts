// Diagnostic (not part of `npm run bench`): CPU time per no-op job, queued → done, of every process that does the
// work — the worker (or the peer's process, which also enqueues), Postgres and Redis — for Conveyor, a raw BullMQ
// worker and graphile-worker, each on a private Postgres and Redis so nothing else is counted. On a box where all
// of them share two cores, throughput is close to the inverse of this total; CPU time (not wall time) also keeps
// the comparison fair on a loaded machine.
//
//   npx tsx --conditions=conveyor-source bench/tools/cpu-per-job.ts [jobs] [concurrency]
//   STATEMENTS=1 also prints Conveyor's costliest statements (pg_stat_statements) and, per table, the rows written
//   (updates HOT or not) and the index entries they wrote (an upper bound: (inserts + non-HOT updates) × indexes,
//   partial indexes counted as if every row matched); CONVEYOR_ONLY=1 skips the peers. PG_PORT=n runs the private
//   Postgres on that port; AUTOVACUUM=1 runs it with autovacuum on, as a production server does. EXPERIMENT_SQL runs
//   one statement on Conveyor's fresh database before the run (what dropping a trigger or an index would save).
//   PG_SETTINGS="a = 1;b = 2" adds postgresql.conf lines (e.g. auto_explain's, to see where a statement spends).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import pg from "pg";
import { freePort, startPrivateRedis } from "@conveyor/testkit";
import { startPrivatePostgres } from "../lib/private-postgres";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import { conveyorEnv, prepare } from "../lib/setup";
import { NOOP_PLUGIN, queueNoopJobs, waitUntilAllDone } from "../scenarios/worker";

const jobs = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 100);
const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString()) || 100;

/** CPU time (user + system) of a process so far, in µs; the last reading once it has exited. */
function cpuWatch(pid: number): { read(): number; stop(): number } {
  let last = 0;
  const read = () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      last = ((Number(fields[11]) + Number(fields[12])) / ticks) * 1e6;
    } catch {
      // Exited: keep the last reading (sampled every 20 ms below).
    }
    return last;
  };
  const timer = setInterval(read, 20);
  return { read, stop: () => (clearInterval(timer), read()) };
}

async function redisCpu(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    const info = await client.info("cpu");
    const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)![1]);
    return (field("used_cpu_user") + field("used_cpu_sys")) * 1e6;
  } finally {
    client.disconnect();
  }
}

type Figures = { name: string; process: number; postgres: number; redis: number };

async function main(): Promise<void> {
  const postgres = await startPrivatePostgres({
    port: process.env.PG_PORT ? Number(process.env.PG_PORT) : undefined,
    autovacuum: Boolean(process.env.AUTOVACUUM),
    // With STATEMENTS, planning is counted too (each statement's plans and their time).
    settings: [...(process.env.STATEMENTS ? ["pg_stat_statements.track_planning = on"] : []), ...(process.env.PG_SETTINGS?.split(";") ?? [])],
  });
  const redis = await startPrivateRedis();
  const results: Figures[] = [];
  try {
    // Conveyor: jobs created as POST /jobs does (in this process, counted under Postgres only), one worker process.
    const env = { ...(await prepare(postgres.url)), redisUrl: redis.url };
    if (process.env.EXPERIMENT_SQL) await env.db.pool.query(process.env.EXPERIMENT_SQL);
    let worker: Child | undefined;
    try {
      const port = await freePort();
      worker = run(
        "apps/worker/src/main.ts",
        conveyorEnv(env, {
          WORKER_TYPES: "bench_noop",
          WORKER_PLUGINS: NOOP_PLUGIN,
          WORKER_CONCURRENCY: String(concurrency),
          WORKER_METRICS_PORT: String(port),
        }),
      );
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      await sleep(1500);
      if (process.env.STATEMENTS) {
        await postgres.resetStatements();
        const client = new pg.Client({ connectionString: env.databaseUrl });
        await client.connect();
        await client.query("SELECT pg_stat_reset()").finally(() => client.end());
      }
      const watch = cpuWatch(worker.pid);
      const before = { process: watch.read(), postgres: postgres.cpuMicros(), redis: await redisCpu(redis.url) };
      await queueNoopJobs(env, jobs);
      await waitUntilAllDone(env, jobs, 200);
      results.push({
        name: "Conveyor",
        process: watch.stop() - before.process,
        postgres: postgres.cpuMicros() - before.postgres,
        redis: (await redisCpu(redis.url)) - before.redis,
      });
      if (process.env.STATEMENTS) {
        for (const s of await postgres.statements(15)) {
          console.log(
            `${(s.totalMs / 1000).toFixed(2).padStart(7)} s ${String(s.calls).padStart(7)} calls ${String(s.rows).padStart(7)} rows ${String(Math.round((s.totalMs * 1000) / jobs)).padStart(5)} µs/job, planned ${String(s.plans).padStart(6)} times ${String(Math.round((s.planMs * 1000) / jobs)).padStart(4)} µs/job  ${s.query.slice(0, 120)}`,
          );
        }
        let entries = 0;
        console.log("table                      ins/job upd/job  hot/job del/job indexes  index entries/job");
        for (const t of await postgres.tableWrites(new URL(env.databaseUrl).pathname.slice(1))) {
          const perJob = ((t.ins + t.upd - t.hot) * t.indexes) / jobs;
          entries += perJob;
          const f = (v: number) => (v / jobs).toFixed(2).padStart(7);
          console.log(
            `${t.table.padEnd(26)} ${f(t.ins)} ${f(t.upd)} ${f(t.hot)} ${f(t.del)} ${String(t.indexes).padStart(7)} ${perJob.toFixed(1).padStart(18)}`,
          );
        }
        console.log(`index entries per job (upper bound): ${entries.toFixed(1)}`);
      }
    } finally {
      await worker?.stop();
      await env.close();
    }

    // The peers: each one process that enqueues and works, measured from start to exit (start-up included, which
    // favours Conveyor a little: its worker's start-up is not counted).
    const peer = async (name: string, entry: string, env: Record<string, string>) => {
      const [pg0, redis0] = [postgres.cpuMicros(), await redisCpu(redis.url)];
      const child = run(entry, env);
      const watch = cpuWatch(child.pid);
      await child.result;
      await new Promise((resolve) => child.proc.once("exit", resolve));
      results.push({ name, process: watch.stop(), postgres: postgres.cpuMicros() - pg0, redis: (await redisCpu(redis.url)) - redis0 });
    };
    if (!process.env.CONVEYOR_ONLY) {
      await peer("BullMQ no-op worker", "bench/baselines/bullmq-worker.ts", {
        REDIS_URL: redis.url,
        PREFIX: "cpu-baseline",
        JOBS: String(jobs),
        CONCURRENCY: String(concurrency),
      });
      await peer("graphile-worker", "bench/baselines/graphile-worker.ts", {
        SERVER_URL: postgres.url,
        JOBS: String(jobs),
        CONCURRENCY: String(concurrency),
        NO_LOG_SUCCESS: "1",
      });
    }
  } finally {
    await redis.stop();
    postgres.stop();
  }
  const us = (v: number) => `${Math.round(v / jobs)}`.padStart(6);
  console.log(`CPU µs per no-op job, ${jobs} jobs, concurrency ${concurrency}:`);
  console.log(`${"".padEnd(22)} process Postgres  Redis  total`);
  for (const r of results) console.log(`${r.name.padEnd(22)} ${us(r.process)} ${us(r.postgres)} ${us(r.redis)} ${us(r.process + r.postgres + r.redis)}`);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
