// Peer for the worker row: pg-boss (a Postgres-only queue) running the same no-op jobs with the same concurrency,
// in a database of its own on the bench's Postgres server. Measured like Conveyor's row: Postgres' clock before the
// first enqueue to the last job's completed_on.
//
// Settings, from the installed version's documentation (12.x: the JobPollingOptions and WorkOptions of its types,
// pgboss.io/api/workers): one work() loop fetching up to `batchSize` CONCURRENCY jobs, their no-op handlers run
// concurrently within the batch; `burstWhenBatchFull` (12.x: "while each fetch returns a full batchSize batch …
// the worker keeps fetching continuously with no delay") drains a busy queue back to back — what 10.x needed a
// `notifyWorker(id)` call from the handler for; `pollingIntervalSeconds` at its minimum, 0.5, for the tail. (With
// 10.x here, more loops with smaller batches ran at 0.5–0.9× of one at concurrency 100.) The pool keeps its default
// of 10 connections. Enqueued with `insert`, its bulk API, one statement per 1,000 jobs (the batch size every row
// of this scenario uses). pg-boss's loop does not await the completion of a batch, so the run ends when Postgres
// has every job completed. pg-boss 12 is an ES module only (tsx loads it) and needs Node ≥ 22.12.
import { PgBoss } from "pg-boss";
import pg from "pg";
import { databaseNow, pollUntil, withScratchDatabase, within } from "../lib/scratch-database";

const QUEUE = "noop";

async function main() {
  const total = Number(process.env.JOBS);
  const concurrency = Number(process.env.CONCURRENCY);
  const result = await withScratchDatabase(process.env.SERVER_URL!, "pgboss", async (connectionString) => {
    const boss = new PgBoss({ connectionString });
    boss.on("error", (error) => process.stderr.write(`pg-boss: ${String(error)}\n`));
    // start() installs pg-boss's schema; a queue is created before it is used.
    await boss.start();
    await boss.createQueue(QUEUE);
    const pool = new pg.Pool({ connectionString, max: 1 });
    try {
      let ran = 0;
      let allRan!: () => void;
      const ranAll = new Promise<void>((resolve) => (allRan = resolve));
      await boss.work(QUEUE, { batchSize: concurrency, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true }, async (jobs) => {
        await Promise.all(jobs.map(async () => {}));
        ran += jobs.length;
        if (ran === total) allRan();
      });
      const started = await databaseNow(pool);
      for (let i = 0; i < total; i += 1000) {
        await boss.insert(
          QUEUE,
          Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ data: { n: i + j } })),
        );
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
