// Peer for the worker row: pg-boss (a Postgres-only queue) running the same no-op jobs with the same concurrency,
// in a database of its own on the bench's Postgres server. Measured like Conveyor's row: Postgres' clock before the
// first enqueue to the last job's completed_on.
//
// Settings, from the installed version's docs (docs/api/workers.md and jobs.md, 10.x; pg-boss 11+ needs Node 22):
// 10.x has no teamSize — a work() call is one polling loop that fetches up to `batchSize` jobs, runs the handler on
// them and waits `pollingIntervalSeconds` (default 2, minimum 0.5) before fetching again. So the CONCURRENCY jobs
// in flight are one loop with batchSize CONCURRENCY, each job's no-op run concurrently with the rest of its batch
// (more loops with smaller batches were slower here: at concurrency 100, 2, 4 and 10 loops ran at 0.5–0.9× of
// one). The interval is the minimum, 0.5 s, and when a batch came back full the handler calls `notifyWorker(id)`
// ("bypass the job polling interval … for this iteration"), so a busy queue is drained back to back: without it
// the loop takes one batch per half second (199 jobs/s at concurrency 100, measured). The pool keeps its default
// of 10 connections (4 and 20 were no faster). Enqueued with `insert`, its bulk API, one statement per 1,000 jobs
// (the batch size every row of this scenario uses). pg-boss's loop does not await the completion of a batch, so the
// run ends when Postgres has every job completed.
import PgBoss from "pg-boss";
import pg from "pg";
import { databaseNow, pollUntil, withScratchDatabase, within } from "../lib/scratch-database";

const QUEUE = "noop";

async function main() {
  const total = Number(process.env.JOBS);
  const concurrency = Number(process.env.CONCURRENCY);
  const result = await withScratchDatabase(process.env.SERVER_URL!, "pgboss", async (connectionString) => {
    const boss = new PgBoss({ connectionString });
    boss.on("error", (error) => process.stderr.write(`pg-boss: ${String(error)}\n`));
    // start() installs pg-boss's schema; 10.x wants a queue created before it is used.
    await boss.start();
    await boss.createQueue(QUEUE);
    const pool = new pg.Pool({ connectionString, max: 1 });
    try {
      let ran = 0;
      let allRan!: () => void;
      const ranAll = new Promise<void>((resolve) => (allRan = resolve));
      const id: string = await boss.work(QUEUE, { batchSize: concurrency, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        await Promise.all(jobs.map(async () => {}));
        if (jobs.length === concurrency) boss.notifyWorker(id);
        ran += jobs.length;
        if (ran === total) allRan();
      });
      const started = await databaseNow(pool);
      for (let i = 0; i < total; i += 1000) {
        await boss.insert(Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ name: QUEUE, data: { n: i + j } })));
      }
      await within(ranAll, 10 * 60_000, "every job run by pg-boss");
      await pollUntil(pool, "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'", [QUEUE], total, 5);
      const { rows } = await pool.query<{ at: Date }>("SELECT max(completed_on) AS at FROM pgboss.job WHERE name = $1", [QUEUE]);
      return { jobs: total, per_second: total / ((rows[0]!.at.getTime() - started.getTime()) / 1000) };
    } finally {
      await boss.stop();
      await pool.end();
    }
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
