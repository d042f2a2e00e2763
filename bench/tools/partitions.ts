// Time partitions, the prototype measured (docs/reference/time.md#partitions-and-retention; docs/decisions/2026-12-06-time-partitions.md): on a private
// Postgres server, a history of --jobs jobs (lib/seed-history.ts, 30 days) in today's tables, copied into the
// partitioned twins of bench/sql/time-partitions-prototype.sql (one partition per UTC day and table), and then the
// same retention — every job finished before a UTC midnight 28 days ago — done both ways: today's batched DELETE
// (maintenance/retention.ts' statement, 5,000 jobs a batch, no pauses) on the plain tables, and detaching and
// dropping the days' partitions on the twins. A list query runs in a loop on another connection throughout each
// pass (docs/reference/robustness.md#r58: both finish); its latencies are reported. Also: reads on both (first page, a job by id),
// sizes before and after, and an insert for a day no partition exists for yet (it lands in DEFAULT; making the day
// moves it out).
//   tsx bench/tools/partitions.ts --jobs=2000000 --postgres-port=55452   → <out>/partitions.json and a printout
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { deleteFinishedJobs } from "@conveyor/db";
import { startPrivatePostgres } from "../lib/private-postgres";
import { repoRoot } from "../lib/procs";
import { seedHistory, tableBytes } from "../lib/seed-history";
import { prepare } from "../lib/setup";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const jobs = Number(args.jobs ?? 2_000_000);
const out = path.resolve(args.out ?? path.join(repoRoot, "bench/results"));
const DAY_MS = 86_400_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

type Latencies = { count: number; p50: number; p99: number; max: number };
const summary = (times: number[]): Latencies => {
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN;
  return { count: times.length, p50: at(0.5), p99: at(0.99), max: times.at(-1) ?? Number.NaN };
};

/** Runs `sql` in a loop on its own connection until `until` settles; answers its latencies. */
async function alongside(url: string, sql: string, params: unknown[], until: Promise<unknown>): Promise<Latencies> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const times: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  try {
    while (!done) {
      const started = performance.now();
      await client.query(sql, params);
      times.push(performance.now() - started);
    }
  } finally {
    await client.end();
  }
  return summary(times);
}

async function timed(pool: pg.Pool, sql: string, params: (i: number) => unknown[], n = 300): Promise<Latencies> {
  const times: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const started = performance.now();
    await pool.query(sql, params(i));
    if (i >= 20) times.push(performance.now() - started);
  }
  return summary(times);
}

const mb = (tables: Record<string, { total: number }>, names: string[]) =>
  Object.entries(tables)
    .filter(([name]) => names.some((n) => name === n || name.startsWith(`${n}_`)))
    .reduce((a, [, t]) => a + t.total, 0) / 1048576;

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const server = await startPrivatePostgres({
    port: Number(args["postgres-port"] ?? 55452),
    settings: ["max_wal_size = '2GB'", "checkpoint_timeout = '30min'", "maintenance_work_mem = '512MB'"],
  });
  // Stopped early, the private server goes with the run.
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      server.stop();
      process.exit(130);
    });
  const env = await prepare(server.url, "year_partitions");
  const db = env.db.pool;
  try {
    let started = performance.now();
    await seedHistory(db, { orgId: env.orgId, count: jobs, days: 30 });
    log(`seeded ${jobs} jobs in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await db.query(readFileSync(path.join(repoRoot, "bench/sql/time-partitions-prototype.sql"), "utf8"));
    const made = await db.query<{ n: number }>("SELECT tp_make_partitions((now() - interval '31 days')::date, (now() + interval '7 days')::date) AS n");
    started = performance.now();
    for (const [twin, plain] of [
      ["tp_jobs", "jobs"],
      ["tp_events", "events"],
      ["tp_job_logs", "job_logs"],
      ["tp_job_search", "job_search"],
    ]) {
      await db.query(`INSERT INTO ${twin} (${await columns(db, plain!)}) SELECT ${await columns(db, plain!)} FROM ${plain}`);
      await db.query(`VACUUM ANALYZE ${twin}`);
    }
    const copySeconds = (performance.now() - started) / 1000;
    log(`${made.rows[0]!.n} partitions made; copied into the twins in ${copySeconds.toFixed(0)} s`);
    await db.query("CHECKPOINT");

    const PLAIN = ["jobs", "events", "job_logs", "job_search"];
    const TWINS = ["tp_jobs", "tp_events", "tp_job_logs", "tp_job_search"];
    const before = await tableBytes(db);

    // Reads on both: the first page of the org's list, and one job by id.
    const { rows: sample } = await db.query<{ id: string }>("SELECT id FROM jobs TABLESAMPLE SYSTEM (1) LIMIT 1000");
    const reads = {
      firstPage: {
        plain: await timed(db, "SELECT id FROM jobs WHERE org_id = $1 ORDER BY id DESC LIMIT 100", () => [env.orgId]),
        partitioned: await timed(db, "SELECT id FROM tp_jobs WHERE org_id = $1 ORDER BY id DESC LIMIT 100", () => [env.orgId]),
      },
      failedPage: {
        plain: await timed(db, "SELECT id FROM jobs WHERE org_id = $1 AND status = 'failed' ORDER BY id DESC LIMIT 100", () => [env.orgId]),
        partitioned: await timed(db, "SELECT id FROM tp_jobs WHERE org_id = $1 AND status = 'failed' ORDER BY id DESC LIMIT 100", () => [env.orgId]),
      },
      byId: {
        plain: await timed(db, "SELECT * FROM jobs WHERE id = $1", (i) => [sample[(i * 7919) % sample.length]!.id]),
        partitioned: await timed(db, "SELECT * FROM tp_jobs WHERE id = $1", (i) => [sample[(i * 7919) % sample.length]!.id]),
      },
      logsOfAJob: {
        plain: await timed(db, "SELECT * FROM job_logs WHERE job_id = $1 ORDER BY id", (i) => [sample[(i * 7919) % sample.length]!.id]),
        partitioned: await timed(db, "SELECT * FROM tp_job_logs WHERE job_id = $1 ORDER BY id", (i) => [sample[(i * 7919) % sample.length]!.id]),
      },
    };
    log(`reads: ${JSON.stringify(reads)}`);

    // The cut-off: a UTC midnight 28 days ago, so both ways take exactly the same jobs.
    const cutoff = new Date(Math.floor((Date.now() - 28 * DAY_MS) / DAY_MS) * DAY_MS);
    const listSql = (t: string) => `SELECT id FROM ${t} WHERE org_id = $1 ORDER BY id DESC LIMIT 100`;

    // Today's batched DELETE on the plain tables.
    started = performance.now();
    let deleted = 0;
    const deleting = (async () => {
      for (;;) {
        const n = await deleteFinishedJobs(db, { before: cutoff, limit: 5_000 });
        deleted += n;
        if (n < 5_000) break;
      }
    })();
    const listDuringDelete = await alongside(server.url.replace(/\/postgres$/, `/${dbName(env.databaseUrl)}`), listSql("jobs"), [env.orgId], deleting);
    await deleting;
    const deleteSeconds = (performance.now() - started) / 1000;
    const afterDelete = await tableBytes(db);
    started = performance.now();
    for (const t of PLAIN) await db.query(`VACUUM ${t}`);
    const vacuumSeconds = (performance.now() - started) / 1000;
    const afterVacuum = await tableBytes(db);
    log(`batched DELETE: ${deleted} jobs in ${deleteSeconds.toFixed(1)} s; VACUUM after it ${vacuumSeconds.toFixed(1)} s`);

    // The partitions' way: every day partition wholly before the cut-off is retired and dropped.
    started = performance.now();
    let gone = 0;
    let kept = 0;
    let days = 0;
    const dropping = (async () => {
      const { rows: parts } = await db.query<{ day: string }>(
        `SELECT to_date(substring(c.relname from '([0-9]{8})$'), 'YYYYMMDD')::text AS day
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'tp_jobs'::regclass AND c.relname ~ '_[0-9]{8}$'
            AND to_date(substring(c.relname from '([0-9]{8})$'), 'YYYYMMDD') + 1 <= ($1::timestamptz AT TIME ZONE 'UTC')::date
          ORDER BY 1`,
        [cutoff],
      );
      for (const { day } of parts) {
        const client = await db.connect();
        try {
          await client.query("BEGIN");
          // Detaching takes the parents' ACCESS EXCLUSIVE lock for the copy of the kept jobs only; a pass that cannot
          // have it within a second gives way to the queries and tries the day again later.
          await client.query("SET LOCAL lock_timeout = '1s'");
          const { rows } = await client.query<{ gone: string; kept: string }>("SELECT * FROM tp_retire_day($1::date, $2)", [day, cutoff]);
          await client.query("COMMIT");
          gone += Number(rows[0]!.gone);
          kept += Number(rows[0]!.kept);
          const suffix = day.replace(/-/g, "");
          for (const t of TWINS) await client.query(`DROP TABLE ${t}_${suffix}`);
          days++;
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        } finally {
          client.release();
        }
      }
    })();
    const listDuringDrop = await alongside(server.url.replace(/\/postgres$/, `/${dbName(env.databaseUrl)}`), listSql("tp_jobs"), [env.orgId], dropping);
    await dropping;
    const dropSeconds = (performance.now() - started) / 1000;
    const afterDrop = await tableBytes(db);
    log(`partitions: ${days} days retired, ${gone} jobs gone and ${kept} kept in DEFAULT, in ${dropSeconds.toFixed(2)} s`);

    // docs/reference/robustness.md#r58: a job created for a day no partition exists for is stored (DEFAULT); making the day moves it.
    const future = new Date(Date.now() + 60 * DAY_MS);
    const { rows: stray } = await db.query<{ id: string; place: string }>(
      `INSERT INTO tp_jobs (id, org_id, type, status, payload, created_at, updated_at)
       VALUES ((lpad(to_hex(floor(extract(epoch FROM $2::timestamptz) * 1000)::bigint), 12, '0') || '7abc8def0123456789ab')::uuid, $1, 'webhook', 'pending', '{}', $2, $2)
       RETURNING id, tableoid::regclass::text AS place`,
      [env.orgId, future],
    );
    await db.query("SELECT tp_make_partitions($1::date, $1::date)", [future.toISOString().slice(0, 10)]);
    const { rows: moved } = await db.query<{ place: string }>("SELECT tableoid::regclass::text AS place FROM tp_jobs WHERE id = $1", [stray[0]!.id]);
    log(`a job 60 days ahead: stored in ${stray[0]!.place}; after the day was made, in ${moved[0]!.place}`);

    const result = {
      jobs,
      cutoff: cutoff.toISOString(),
      copySeconds,
      reads,
      delete: {
        jobs: deleted,
        seconds: deleteSeconds,
        vacuumSeconds,
        listDuring: listDuringDelete,
        mbBefore: mb(before, PLAIN),
        mbAfter: mb(afterDelete, PLAIN),
        mbAfterVacuum: mb(afterVacuum, PLAIN),
      },
      partitions: { days, jobs: gone, kept, seconds: dropSeconds, listDuring: listDuringDrop, mbBefore: mb(before, TWINS), mbAfter: mb(afterDrop, TWINS) },
      strayInsert: { storedIn: stray[0]!.place, afterMakingTheDay: moved[0]!.place },
    };
    writeFileSync(path.join(out, "partitions.json"), `${JSON.stringify(result, null, 1)}\n`);
    log(JSON.stringify(result, null, 1));
  } finally {
    await env.close().catch(() => {});
    server.stop();
  }
}

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

async function columns(db: pg.Pool, table: string): Promise<string> {
  const { rows } = await db.query<{ c: string }>("SELECT tp_columns($1) AS c", [table]);
  return rows[0]!.c;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
