// The audit log's retention, by month partition against the batched DELETE (docs/reference/time.md#partitions-and-retention,
// docs/decisions/2026-12-07-partitioned-audit-log-and-deliveries.md): on a private Postgres server, --rows audit
// entries spread evenly over the last 460 days, twice per round in fresh databases of the same migrations:
//   partitioned — one partition per month (as the leader and the migration make them); the pass drops every month
//                 wholly before the 400-day cut-off (dropPartitionsBefore), then deletes what DEFAULT holds (nothing);
//   batched     — the same rows in the DEFAULT partition (no month partitions: the table as it was, one heap with its
//                 six indexes); the pass is the batched DELETE (deleteAuditEntriesBefore, 5,000 a batch, no pauses),
//                 and then the VACUUM that makes its space reusable.
// Reported per pass: wall time, the server's CPU time, entries removed, the table's bytes before and after.
// Rounds interleave the two, so both meet the same machine load. Then, once: the migration that partitioned the table,
// run on a database at the migration before holding the same entries (how long writers of the audit log wait for it).
//   tsx bench/tools/audit-partitions.ts --rows=1000000 --rounds=2 [--migration | --migration=only] --postgres-port=55431
//   → <out>/audit-partitions.json
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import {
  AUDIT_LOG_PARTITIONS,
  createDatabase,
  deleteAuditEntriesBefore,
  dropPartitionsBefore,
  makePartition,
  spanAfter,
  spanStart,
  withDatabaseName,
} from "@conveyor/db";
import { startPrivatePostgres, type PrivatePostgres } from "../lib/private-postgres";
import { repoRoot } from "../lib/procs";
import { prepare } from "../lib/setup";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const rows = Number(args.rows ?? 1_000_000);
const rounds = Number(args.rounds ?? 1);
const out = path.resolve(args.out ?? path.join(repoRoot, "bench/results"));
const DAY_MS = 86_400_000;
const SPREAD_DAYS = 460;
const RETENTION_DAYS = 400;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The audit log's bytes, its partitions' tables and indexes summed. */
const auditBytes = async (pool: pg.Pool) =>
  Number(
    (await pool.query<{ bytes: string }>("SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree('audit_log') WHERE isleaf"))
      .rows[0]!.bytes,
  );

/** `rows` entries, evenly from SPREAD_DAYS ago to now and in that order (as they were written), of 20 organizations, with a browser's user agent. */
async function seed(pool: pg.Pool, now: Date): Promise<void> {
  const batch = 100_000;
  for (let from = 0; from < rows; from += batch) {
    await pool.query(
      `INSERT INTO audit_log (id, org_id, time, actor_type, actor_id, actor_label, action, target_type, target_id, target_label, ip, user_agent, request_id, changes)
       SELECT gen_random_uuid(), ('00000000-0000-7000-8000-0000000000' || lpad((n % 20)::text, 2, '0'))::uuid,
              $1::timestamptz - (1 - n::float8 / $2) * $3 * interval '1 day', 'user', gen_random_uuid(), 'someone@example.com',
              (ARRAY['member.role_change', 'api_key.create', 'job.cancel', 'webhook_endpoint.update'])[1 + n % 4],
              'member', gen_random_uuid(), 'other@example.com', '203.0.113.' || (n % 250),
              'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
              'req_' || md5(n::text), '{"role":{"before":"member","after":"admin"}}'
         FROM generate_series($4::int, $5::int) AS n`,
      [now, rows, SPREAD_DAYS, from, Math.min(rows, from + batch) - 1],
    );
  }
  await pool.query("ANALYZE audit_log");
}

type Pass = {
  variant: string;
  removed: number;
  wallMs: number;
  cpuMs: number;
  mbBefore: number;
  mbAfter: number;
  vacuum?: { wallMs: number; cpuMs: number; mbAfter: number };
};

async function measured<T>(server: PrivatePostgres, fn: () => Promise<T>): Promise<{ value: T; wallMs: number; cpuMs: number }> {
  const cpu = server.cpuMicros();
  const started = performance.now();
  const value = await fn();
  return { value, wallMs: performance.now() - started, cpuMs: (server.cpuMicros() - cpu) / 1000 };
}

async function pass(server: PrivatePostgres, variant: "partitioned" | "batched"): Promise<Pass> {
  const env = await prepare(server.url, `year_audit_${variant}`);
  const pool = env.db.pool;
  try {
    const now = new Date();
    if (variant === "partitioned") {
      const first = spanStart(AUDIT_LOG_PARTITIONS, new Date(now.getTime() - SPREAD_DAYS * DAY_MS));
      for (let start = first; start <= now; start = spanAfter(AUDIT_LOG_PARTITIONS, start)) await makePartition(pool, AUDIT_LOG_PARTITIONS, start);
    } else {
      // The migration made this month's and the next: without them every entry sits in DEFAULT, the one heap of before.
      const month = spanStart(AUDIT_LOG_PARTITIONS, now);
      for (const start of [month, spanAfter(AUDIT_LOG_PARTITIONS, month)])
        await pool.query(`DROP TABLE IF EXISTS audit_log_p${start.toISOString().slice(0, 7).replace("-", "")}`);
    }
    await seed(pool, now);
    await pool.query("CHECKPOINT");
    const before = new Date(now.getTime() - RETENTION_DAYS * DAY_MS);
    const mbBefore = (await auditBytes(pool)) / 1048576;
    const count = async () => Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log")).rows[0]!.n);
    const total = await count();
    const run = await measured(server, async () => {
      if (variant === "partitioned") await dropPartitionsBefore(pool, AUDIT_LOG_PARTITIONS, before);
      for (;;) if ((await deleteAuditEntriesBefore(pool, { before, limit: 5_000 })) < 5_000) break;
    });
    const result: Pass = {
      variant,
      removed: total - (await count()),
      wallMs: Math.round(run.wallMs),
      cpuMs: Math.round(run.cpuMs),
      mbBefore: Math.round(mbBefore),
      mbAfter: Math.round((await auditBytes(pool)) / 1048576),
    };
    if (variant === "batched") {
      const vacuum = await measured(server, () => pool.query("VACUUM audit_log"));
      result.vacuum = { wallMs: Math.round(vacuum.wallMs), cpuMs: Math.round(vacuum.cpuMs), mbAfter: Math.round((await auditBytes(pool)) / 1048576) };
    }
    log(JSON.stringify(result));
    return result;
  } finally {
    await env.close();
  }
}

const MIGRATION = "20261207064000_partitioned_audit_log_and_deliveries";
const migrationsDir = path.join(repoRoot, "prisma/migrations");

/** The partitioning migration on `rows` entries in the table as it was before: its wall and CPU time. */
async function migrationPass(server: PrivatePostgres): Promise<{ variant: string; wallMs: number; cpuMs: number }> {
  const name = `year_audit_migration_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const db = createDatabase({ url: withDatabaseName(server.url, name), poolSize: 2 });
  try {
    for (const dir of readdirSync(migrationsDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name < MIGRATION)
      .map((e) => e.name)
      .sort())
      await db.pool.query(readFileSync(path.join(migrationsDir, dir, "migration.sql"), "utf8"));
    await seed(db.pool, new Date());
    await db.pool.query("CHECKPOINT");
    const run = await measured(server, () => db.pool.query(readFileSync(path.join(migrationsDir, MIGRATION, "migration.sql"), "utf8")));
    const result = { variant: "migration", wallMs: Math.round(run.wallMs), cpuMs: Math.round(run.cpuMs) };
    log(JSON.stringify(result));
    return result;
  } finally {
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const server = await startPrivatePostgres({
    port: Number(args["postgres-port"] ?? 55431),
    settings: ["max_wal_size = '2GB'", "checkpoint_timeout = '30min'", "maintenance_work_mem = '256MB'"],
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      server.stop();
      process.exit(130);
    });
  const results: (Pass | { variant: string; wallMs: number; cpuMs: number })[] = [];
  try {
    if (args.migration !== "only")
      for (let round = 0; round < rounds; round++)
        for (const variant of round % 2 ? (["batched", "partitioned"] as const) : (["partitioned", "batched"] as const))
          results.push(await pass(server, variant));
    if ("migration" in args) results.push(await migrationPass(server));
  } finally {
    server.stop();
  }
  writeFileSync(path.join(out, "audit-partitions.json"), JSON.stringify({ rows, spreadDays: SPREAD_DAYS, retentionDays: RETENTION_DAYS, results }, null, 2));
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
