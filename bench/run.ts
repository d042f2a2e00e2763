// `npm run bench`: Conveyor's speed and memory, each figure next to a baseline measured in the same run (a
// ratio travels between machines better than an absolute number). Prints a table and writes
// bench/results/latest.json. Options: --only=post,batch,worker,pgcost,e2e,lone,list,stats,search,bulk,retention  --jobs=N  --list-jobs=N  --stats-jobs=N
// Lone job (--only=lone): --lone-jobs=N (default 200), POST → handler start on an idle system
// --search-jobs=N  --retention-jobs=N (both default to --list-jobs)  --bulk-jobs=N  --seconds=N  --concurrency=N[,N…]
// Events (--only=events,sse,webhooks): --events-jobs=N (default --jobs)  --sse-clients=1000 --sse-orgs=50 --sse-rate=500
// --webhook-rate=1000 --webhook-workers=2 --webhook-concurrency=100
// Console (--only=console): --console-jobs=N (default 1,000,000; 10000 for a quick run)
// Flow control (--only=ratelimit,keys,paused,dedupe): --ratelimit-jobs=5000 --keys-jobs=100000 --keys=10000 --paused-jobs=100000
// Audit log (--only=audit,audit-list): --audit-entries=N (default 1,000,000), --bulk-jobs for the bulk cancel
// Live results (--only=live,live-worker): --live-jobs=1000 streams and jobs, --live-seconds=10 of progress 10×/s each;
//   the worker's rate with progress reports vs without: --live-worker-jobs=3000
// Dependencies (--only=deps): graph creation against a plain batch, a 100-job chain, a fan-in of 10,000
// Steps (--only=steps): a 10-step handler against 10 × one job; --steps-waiting=N jobs on waitpoints (default 10,000)
// Failures grouped by error (--only=failures): --failures-jobs=N (default 1,000,000, a quarter failed)
// Tenants (--only=tenants,usage): POST /jobs with usage metering and quotas vs without; GET /usage p99 over 400 days × 8 types
// Scale-out (--only=tracing,redis-cluster,webhook-keepalive): tracing on vs off (no-op worker, POST /jobs); Redis Cluster
// vs single Redis; webhook deliveries/s to one HTTPS endpoint with keep-alive vs without
// High availability (--only=pgbouncer,failover): POST /jobs and the worker through PgBouncer vs direct (--ha-jobs=N,
// default 10,000); a failover under ~200 POST /jobs/s, with a synchronous and with an asynchronous replica
// Own workers (--only=own-workers, issue 44): a Python no-op worker vs the built-in worker (--own-jobs=10000), a lone job
// POST → Python function start (--own-lone-jobs=100), POST /jobs beside 1,000 idle long-polls vs none
// A year of jobs (--only=year, not in the default list: it seeds millions of jobs on a private Postgres server):
// --year-sizes=1000000,10000000 --year-api-port=3703 --year-postgres-port=55450; figures also in results/year.json
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "@conveyor/testkit";
import { printTable, ratio, type Row } from "./lib/report";
import { prepare } from "./lib/setup";
import { auditList, auditWriteCost } from "./scenarios/audit";
import { batch } from "./scenarios/batch";
import { bulkCancel } from "./scenarios/bulk-cancel";
import { consolePage } from "./scenarios/console";
import { endToEnd } from "./scenarios/end-to-end";
import { loneJob } from "./scenarios/lone-job";
import { ownWorkers } from "./scenarios/own-workers";
import { failures } from "./scenarios/failures";
import { failover, throughPgBouncer } from "./scenarios/ha";
import { concurrencyKeys, pausedOrg, postWithDedupe, rateLimitAccuracy } from "./scenarios/flow-control";
import { list } from "./scenarios/list";
import { pgCost } from "./scenarios/pg-cost";
import { postJobs } from "./scenarios/post-jobs";
import { retention } from "./scenarios/retention";
import { redisClusterCost, tracingCost, webhookKeepAlive } from "./scenarios/scale-out";
import { eventWriteCost, sseFanOut } from "./scenarios/events";
import { dependencies } from "./scenarios/dependencies";
import { dueOnTime, noisyNeighbour, priority } from "./scenarios/scheduling";
import { search, searchIndexCost } from "./scenarios/search";
import { stats } from "./scenarios/stats";
import { steps } from "./scenarios/steps";
import { webhookDeliveries } from "./scenarios/webhooks";
import { tenantsPost, tenantsUsage } from "./scenarios/tenants";
import { worker } from "./scenarios/worker";
import { year } from "./scenarios/year";
import { liveStreams, workerRateWithProgress } from "./scenarios/live";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const only = new Set(
  (
    args.only ??
    "post,batch,worker,pgcost,e2e,lone,list,stats,noisy,due,priority,ratelimit,keys,paused,dedupe,search,bulk,retention,events,sse,webhooks,console,audit,audit-list,deps,tracing,redis-cluster,webhook-keepalive,failures,pgbouncer,failover,live,live-worker,tenants,usage,own-workers"
  ).split(","),
);
const seconds = Number(args.seconds ?? 6);
const workerJobs = Number(args.jobs ?? 20_000);
const listJobs = Number(args["list-jobs"] ?? 1_000_000);
const statsJobs = Number(args["stats-jobs"] ?? 1_000_000);
const searchJobs = Number(args["search-jobs"] ?? listJobs);
const retentionJobs = Number(args["retention-jobs"] ?? listJobs);
const bulkJobs = Number(args["bulk-jobs"] ?? 10_000);
const consoleJobs = Number(args["console-jobs"] ?? 1_000_000);
// Worker concurrencies to measure (the baseline runs at each too); the first also serves the end-to-end runs.
// Conveyor's worker waits on Postgres twice per job, so its throughput grows with concurrency; BullMQ's no-op
// worker is CPU-bound and does not.
const concurrencies = (args.concurrency ?? "100,300").split(",").map(Number);
const concurrency = concurrencies[0]!;

async function main(): Promise<void> {
  const started = Date.now();
  // --db-prefix names the bench database (a helper sharing the machine's Postgres prefixes its own); --port and
  // --worker-port pin the API's and the worker's ports (a shared machine gives each user a range).
  const env = await prepare(undefined, typeof args["db-prefix"] === "string" ? args["db-prefix"] : undefined);
  const rows: Row[] = [];
  const step = async (name: string, fn: () => Promise<Row[]>) => {
    if (!only.has(name)) return;
    const t = Date.now();
    process.stdout.write(`running ${name}…\n`);
    try {
      const result = await fn();
      rows.push(...result);
      for (const r of result) process.stdout.write(`  ${r.metric}: ${r.conveyor.toFixed(1)} ${r.unit} (baseline ${r.baseline?.toFixed(1) ?? "—"})\n`);
    } catch (error) {
      process.stdout.write(`  ${name} failed: ${(error as Error).message}\n`);
      rows.push({
        scenario: name,
        metric: `failed: ${(error as Error).message.split("\n")[0]}`,
        conveyor: NaN,
        baseline: null,
        baselineName: "",
        unit: "",
        met: false,
      });
    }
    process.stdout.write(`  ${name} took ${((Date.now() - t) / 1000).toFixed(0)} s\n`);
  };
  try {
    const port = args.port ? Number(args.port) : await freePort();
    const workerPort = args["worker-port"] ? Number(args["worker-port"]) : await freePort();
    await step("post", () => postJobs(env, port, seconds));
    await step("batch", () => batch(env, port, seconds));
    await step("worker", async () => {
      const rows: Row[] = [];
      for (const [i, c] of concurrencies.entries()) {
        const result = await worker(env, workerPort, workerJobs, c);
        rows.push(...(i === 0 ? result : result.filter((r) => r.scenario !== "Worker RSS")));
      }
      return rows;
    });
    await step("pgcost", () => pgCost(workerPort, workerJobs, concurrency));
    await step("e2e", () => endToEnd(env, { api: port, worker: workerPort }, [250, 500, 1000, 2000], Math.max(4, seconds - 1), concurrency));
    await step("lone", () => loneJob(env, { api: port, worker: workerPort }, Number(args["lone-jobs"] ?? 200)));
    await step("list", () => list(env, port, listJobs, seconds));
    await step("stats", () => stats(env, port, statsJobs, seconds));
    await step("noisy", () => noisyNeighbour(env, workerPort, Number(args["noisy-jobs"] ?? 20_000)));
    await step("due", () => dueOnTime(env, workerPort, Number(args["due-jobs"] ?? 10_000)));
    await step("priority", () => priority(env, workerPort, Number(args["priority-jobs"] ?? 10_000)));
    await step("ratelimit", () => rateLimitAccuracy(env, workerPort, Number(args["ratelimit-jobs"] ?? 5_000)));
    await step("keys", () => concurrencyKeys(env, workerPort, Number(args["keys-jobs"] ?? 100_000), Number(args.keys ?? 10_000)));
    await step("paused", () => pausedOrg(env, workerPort, Number(args["paused-jobs"] ?? 100_000)));
    await step("dedupe", () => postWithDedupe(env, port, seconds));
    await step("search", async () => [...(await searchIndexCost(env, port, seconds)), ...(await search(env, port, searchJobs, seconds))]);
    await step("bulk", () => bulkCancel(env, port, bulkJobs));
    await step("retention", () => retention(env, { api: port, worker: workerPort }, retentionJobs, seconds));
    await step("events", () => eventWriteCost(env, workerPort, Number(args["events-jobs"] ?? workerJobs), 100));
    await step("sse", () =>
      sseFanOut(env, port, {
        clients: Number(args["sse-clients"] ?? 1_000),
        orgs: Number(args["sse-orgs"] ?? 50),
        rate: Number(args["sse-rate"] ?? 500),
        seconds,
      }),
    );
    await step("webhooks", () =>
      webhookDeliveries(env, workerPort, {
        rate: Number(args["webhook-rate"] ?? 1_000),
        seconds,
        workers: Number(args["webhook-workers"] ?? 2),
        concurrency: Number(args["webhook-concurrency"] ?? 100),
      }),
    );
    await step("console", () => consolePage(env, port, consoleJobs));
    await step("audit", () => auditWriteCost(env, port, { seconds, bulkJobs }));
    await step("deps", () => dependencies(env, { api: port, worker: workerPort }, concurrency));
    await step("steps", () => steps(env, { api: port, worker: workerPort }, concurrency, Number(args["steps-waiting"] ?? 10_000)));
    await step("failures", () => failures(env, port, Number(args["failures-jobs"] ?? 1_000_000), seconds));
    await step("tracing", () => tracingCost(env, { api: port, worker: workerPort }, workerJobs, concurrency, seconds));
    await step("redis-cluster", () => redisClusterCost(env, workerPort, workerJobs, concurrency));
    await step("webhook-keepalive", () => webhookKeepAlive(seconds, Number(args["webhook-concurrency"] ?? 100)));
    await step("pgbouncer", () => throughPgBouncer(env, port, seconds, Number(args["ha-jobs"] ?? 10_000), concurrency));
    await step("failover", async () => [...(await failover(port, true)), ...(await failover(port, false))]);
    await step("live", () =>
      liveStreams(env, { api: port, worker: workerPort }, { jobs: Number(args["live-jobs"] ?? 1_000), seconds: Number(args["live-seconds"] ?? 10) }),
    );
    await step("live-worker", () => workerRateWithProgress(env, workerPort, Number(args["live-worker-jobs"] ?? 3_000)));
    await step("tenants", () => tenantsPost(env, port, seconds));
    await step("usage", () => tenantsUsage(env, port, seconds));
    await step("own-workers", () =>
      ownWorkers(env, { api: port, worker: workerPort }, { jobs: Number(args["own-jobs"] ?? 10_000), loneJobs: Number(args["own-lone-jobs"] ?? 100), seconds }),
    );
    await step("audit-list", () => auditList(env, port, { entries: Number(args["audit-entries"] ?? 1_000_000), seconds }));
    await step("year", async () => {
      const result = await year({
        sizes: (args["year-sizes"] ?? "1000000,10000000").split(",").map(Number),
        apiPort: Number(args["year-api-port"] ?? 3703),
        postgresPort: Number(args["year-postgres-port"] ?? 55450),
        durationS: seconds,
        log: (line) => process.stdout.write(`${line}\n`),
      });
      writeFileSync(path.resolve(__dirname, "results/year.json"), `${JSON.stringify(result.figures, null, 1)}\n`);
      return result.rows;
    });
  } finally {
    await env.close();
  }

  const table = printTable(rows);
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
  process.stdout.write(`\n${table}\n\nmachine: ${machine}\nduration: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const missed = rows.filter((r) => r.met === false);
  if (missed.length) process.stdout.write(`targets missed: ${missed.map((r) => `${r.scenario} ${r.metric}`).join("; ")}\n`);

  const out = path.resolve(__dirname, "results/latest.json");
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), machine, command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`, rows: rows.map((r) => ({ ...r, ratio: ratio(r) })) }, null, 2)}\n`,
  );
  process.stdout.write(`written: ${path.relative(process.cwd(), out)}\n`);
  if (args.check !== undefined && missed.length) process.exitCode = 1;
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
