// Peer for the worker row: graphile-worker (a Postgres-only queue) running the same no-op jobs with the same
// concurrency, in a database of its own on the bench's Postgres server. Measured like Conveyor's row: Postgres'
// clock before the first enqueue to the moment its jobs table is empty (a job's row is deleted when it completes).
//
// Settings, from the installed version's docs (website/docs/performance.md, "Batching", 0.17.x; 0.18's options and
// their documentation in its types are the same) — the configuration
// its authors give for throughput: a local queue of 500 jobs per pool (size ≥ concurrency + 1, as the option's own
// comment asks), completeJobBatchDelay/failJobBatchDelay 0 (release completed jobs in one statement per tick;
// "we'd advise all users to enable these settings"), and a pool of max(10, concurrency + 2) connections (the
// recommendation on maxPoolSize; connections are opened only as needed — 6 at concurrency 300 here). The pool is
// ours, passed as `pgPool`, so it is closed before the database is dropped (graphile-worker's own pool is ended
// without waiting on stop(), and a connection the drop then terminates would crash the process). Enqueued with `addJobs`, its bulk API
// (one `add_jobs` call per 1,000 jobs, the batch size every row of this scenario uses). NO_LOG_SUCCESS=1 (set by
// the scenario, as graphile-worker's own perfTest does) drops the per-job "Completed task" line.
import { makeWorkerUtils, run } from "graphile-worker";
import pg from "pg";
import { databaseNow, pollUntil, withScratchDatabase, within } from "../lib/scratch-database";

async function main() {
  const total = Number(process.env.JOBS);
  const concurrency = Number(process.env.CONCURRENCY);
  const result = await withScratchDatabase(process.env.SERVER_URL!, "graphile", async (connectionString) => {
    let ran = 0;
    let allRan!: () => void;
    const ranAll = new Promise<void>((resolve) => (allRan = resolve));
    const pgPool = new pg.Pool({ connectionString, max: Math.max(10, concurrency + 2) });
    // Handlers for a connection's errors, idle or checked out, as graphile-worker asks of a pool it is given.
    const report = (error: Error) => process.stderr.write(`graphile-worker's pool: ${error.message}\n`);
    pgPool.on("error", report);
    pgPool.on("connect", (client) => client.on("error", report));
    // run() installs graphile-worker's schema (its migrations) before it starts working.
    const runner = await run({
      pgPool,
      noHandleSignals: true,
      parsedCronItems: [], // no cron (else it looks for a ./crontab file)
      taskList: {
        noop: async () => {
          if (++ran === total) allRan();
        },
      },
      preset: {
        worker: {
          concurrentJobs: concurrency,
          localQueue: { size: Math.max(500, concurrency + 1) },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    const utils = await makeWorkerUtils({ pgPool });
    try {
      const started = await databaseNow(pgPool);
      for (let i = 0; i < total; i += 1000) {
        await utils.addJobs(Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ identifier: "noop", payload: { n: i + j } })));
      }
      await within(ranAll, 10 * 60_000, "every job run by graphile-worker");
      // Completions are released in batches after the task returns; done is when the last one is written.
      await pollUntil(pgPool, "SELECT count(*) AS n FROM graphile_worker._private_jobs", [], 0, 5);
      const ended = await databaseNow(pgPool);
      return { jobs: total, per_second: total / ((ended.getTime() - started.getTime()) / 1000) };
    } finally {
      await runner.stop();
      await utils.release();
      await pgPool.end();
    }
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
