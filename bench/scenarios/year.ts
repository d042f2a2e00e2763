// docs/reference/time.md#partitions-and-retention, a year of jobs: the reads a console and an API client make, and a retention pass, at 1 M jobs and at
// 10 M (and 100 M where the disk has room), each size in its own database on a private Postgres server (the
// machine's is shared; its settings are the machine's, autovacuum off as there). The history is written straight
// into Postgres (lib/seed-history.ts: 30 days of jobs, each with search values, three events and two log lines).
// Every read is timed with one request in flight, a different job or value each request where it can be. A row at a
// larger size has the same row at the first size as its baseline; the target is at most twice it.
// The retention pass is today's batched DELETE (maintenance/retention.ts' statement, 5,000 jobs a batch, no pauses):
// the oldest day's finished jobs go (cut-off 29 days ago), and the table and index sizes are read before, just after
// and after a VACUUM. A size whose estimated bytes (the first size's bytes per job, plus a fifth, plus the WAL) would
// leave less than 30 GB free on the disk of the server's data is skipped, and said so.
import { statfsSync } from "node:fs";
import os from "node:os";
import { deleteFinishedJobs } from "@conveyor/db";
import { startPrivatePostgres, type PrivatePostgres } from "../lib/private-postgres";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { HISTORY_TYPES, seedHistory, tableBytes, type TableBytes } from "../lib/seed-history";
import { sequential } from "../lib/sequential";
import { conveyorEnv, prepare } from "../lib/setup";

const DAYS = 30;
const DAY_MS = 86_400_000;

export type YearOptions = { sizes: number[]; apiPort: number; postgresPort: number; durationS: number; log?(line: string): void };

/** One size's figures: read latencies (p50, p99 in ms), the retention pass, and sizes. */
export type YearFigures = {
  jobs: number;
  seedSeconds: number;
  reads: Record<string, { p50: number; p99: number }>;
  retention: { deleted: number; seconds: number; jobsPerSecond: number };
  bytesPerJob: number;
  before: Record<string, TableBytes>;
  after: Record<string, TableBytes>;
  afterVacuum: Record<string, TableBytes>;
};

const total = (tables: Record<string, TableBytes>) => Object.values(tables).reduce((a, t) => a + t.total, 0);
const label = (n: number) => (n >= 1e6 ? `${n / 1e6} M` : `${n / 1e3} k`);

export async function measureSize(server: PrivatePostgres, count: number, options: YearOptions): Promise<YearFigures> {
  const log = options.log ?? (() => {});
  const env = await prepare(server.url, "year_scale");
  let api: Child | undefined;
  try {
    const seedStarted = performance.now();
    await seedHistory(env.db.pool, {
      orgId: env.orgId,
      count,
      days: DAYS,
      onProgress: (done) => done % 2_000_000 === 0 && log(`  seeded ${label(done)} of ${label(count)}`),
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    log(`  seeded ${label(count)} jobs in ${seedSeconds.toFixed(0)} s`);
    const before = await tableBytes(env.db.pool);

    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(options.apiPort) }));
    const origin = `http://127.0.0.1:${options.apiPort}`;
    await waitForHttp(`${origin}/healthz`);
    const headers = { "x-api-key": env.apiKey };
    const ok = (what: string) => (status: number, body: string) => {
      if (status !== 200) throw new Error(`${what} answered ${status}: ${body.slice(0, 200)}`);
    };
    // Jobs picked across the whole history, a different one each request (deterministic: job number i * a prime).
    const { rows: sample } = await env.db.pool.query<{ id: string }>("SELECT id FROM jobs TABLESAMPLE SYSTEM (1) WHERE status <> 'pending' LIMIT 2000");
    const pick = (i: number) => sample[(i * 7919) % sample.length]!.id;
    const reads: YearFigures["reads"] = {};
    const measure = async (name: string, path: (i: number) => string, check = ok(name)) => {
      const r = await sequential({ origin, path, headers, durationS: options.durationS, check });
      reads[name] = { p50: r.p50, p99: r.p99 };
      log(`  ${name}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.count} requests)`);
    };
    const nonEmpty = (what: string) => (status: number, body: string) => {
      ok(what)(status, body);
      if (!body.includes('"id"')) throw new Error(`${what} found nothing: ${body.slice(0, 200)}`);
    };
    await measure("GET /jobs?limit=100 (first page)", () => "/jobs?limit=100", nonEmpty("GET /jobs"));
    await measure(
      "GET /jobs?status=failed&type=…&limit=100 (filtered page)",
      (i) => `/jobs?status=failed&type=${HISTORY_TYPES[i % 4]}&limit=100`,
      nonEmpty("filtered"),
    );
    // ORD-<n>* for n in [count/100, count/10) matches exactly 11 jobs (n and n0..n9) at every size; ORD-<d>* (one
    // digit) matches a ninth of the history, of which the first page is read.
    const tenth = Math.floor(count / 10);
    const hundredth = Math.floor(count / 100);
    await measure(
      "GET /jobs?q=ORD-<n>* (search by prefix, 11 jobs)",
      (i) => `/jobs?q=ORD-${hundredth + ((i * 7919) % (tenth - hundredth))}*&limit=100`,
      (status, body) => {
        ok("search")(status, body);
        const found = (JSON.parse(body) as unknown[]).length;
        if (found !== 11) throw new Error(`GET /jobs?q=ORD-<n>* found ${found} jobs, not 11`);
      },
    );
    await measure(
      "GET /jobs?q=ORD-<d>* (a broad prefix, first 100)",
      (i) => `/jobs?q=ORD-${1 + (i % 9)}*&limit=100`,
      (status, body) => {
        ok("search")(status, body);
        const found = (JSON.parse(body) as unknown[]).length;
        if (found !== 100) throw new Error(`GET /jobs?q=ORD-<d>* found ${found} jobs, not 100`);
      },
    );
    await measure("GET /jobs/failures", () => "/jobs/failures", ok("failures"));
    await measure("GET /jobs/stats?window=day", () => "/jobs/stats?window=day", ok("stats"));
    await measure("GET /jobs/{id}", (i) => `/jobs/${pick(i)}`, nonEmpty("GET /jobs/{id}"));
    await measure(
      "GET /jobs/{id}/logs",
      (i) => `/jobs/${pick(i)}/logs`,
      (status, body) => {
        ok("logs")(status, body);
        if (!body.includes("Attempt 1")) throw new Error(`GET /jobs/{id}/logs found no line: ${body.slice(0, 200)}`);
      },
    );
    await api.stop();
    api = undefined;

    // The retention pass: the oldest day goes, as the leader's retention would take it, without its pauses.
    const cutoff = new Date(Date.now() - (DAYS - 1) * DAY_MS);
    const started = performance.now();
    let deleted = 0;
    for (;;) {
      const n = await deleteFinishedJobs(env.db.pool, { before: cutoff, limit: 5_000 });
      deleted += n;
      if (n < 5_000) break;
    }
    const seconds = (performance.now() - started) / 1000;
    log(`  retention: ${deleted} jobs deleted in ${seconds.toFixed(1)} s`);
    const after = await tableBytes(env.db.pool);
    for (const table of ["jobs", "job_search", "events", "job_logs"]) await env.db.pool.query(`VACUUM ${table}`);
    const afterVacuum = await tableBytes(env.db.pool);
    return {
      jobs: count,
      seedSeconds,
      reads,
      retention: { deleted, seconds, jobsPerSecond: deleted / seconds },
      bytesPerJob: total(before) / count,
      before,
      after,
      afterVacuum,
    };
  } finally {
    await api?.stop();
    await env.close();
  }
}

export async function year(options: YearOptions): Promise<{ rows: Row[]; figures: YearFigures[] }> {
  const server = await startPrivatePostgres({
    port: options.postgresPort,
    settings: ["max_wal_size = '2GB'", "checkpoint_timeout = '30min'", "maintenance_work_mem = '512MB'"],
  });
  const figures: YearFigures[] = [];
  const KEEP_FREE = 30 * 2 ** 30;
  try {
    for (const size of options.sizes) {
      const disk = statfsSync(os.tmpdir());
      const free = disk.bavail * disk.bsize;
      const need = figures.length ? size * figures[0]!.bytesPerJob * 1.2 + 3 * 2 ** 30 : 0;
      if (figures.length && free - need < KEEP_FREE) {
        options.log?.(
          `year: ${label(size)} jobs skipped: about ${(need / 2 ** 30).toFixed(0)} GB needed, ${(free / 2 ** 30).toFixed(0)} GB free, 30 GB kept free`,
        );
        continue;
      }
      options.log?.(`year: ${label(size)} jobs (${(free / 2 ** 30).toFixed(0)} GB free, about ${(need / 2 ** 30).toFixed(0)} GB needed)`);
      figures.push(await measureSize(server, size, options));
    }
  } finally {
    server.stop();
  }
  const first = figures[0]!;
  const rows: Row[] = [];
  for (const f of figures) {
    const scenario = `A year of jobs (${label(f.jobs)} jobs over 30 days)`;
    const vsFirst = f !== first;
    for (const [name, r] of Object.entries(f.reads)) {
      rows.push({
        scenario,
        metric: `${name} p99, one request in flight`,
        conveyor: r.p99,
        baseline: vsFirst ? first.reads[name]!.p99 : null,
        baselineName: vsFirst ? `same row at ${label(first.jobs)}` : "",
        unit: "ms",
        ...(vsFirst ? { target: "≤ 2× baseline", met: r.p99 <= 2 * first.reads[name]!.p99 } : {}),
      });
    }
    rows.push(
      {
        scenario,
        metric: `retention pass, batched DELETE of the oldest day (${f.retention.deleted.toLocaleString("en-US")} jobs)`,
        conveyor: f.retention.seconds,
        baseline: vsFirst ? first.retention.seconds : null,
        baselineName: vsFirst ? `same row at ${label(first.jobs)}` : "",
        unit: "s",
      },
      { scenario, metric: "Postgres bytes per job (tables and indexes)", conveyor: f.bytesPerJob, baseline: null, baselineName: "", unit: "B" },
      {
        scenario,
        metric: "tables and indexes: before → after the pass (MB)",
        conveyor: total(f.after) / 1048576,
        baseline: total(f.before) / 1048576,
        baselineName: "before the pass",
        unit: "MB",
      },
      {
        scenario,
        metric: "tables and indexes after the pass and a VACUUM (MB)",
        conveyor: total(f.afterVacuum) / 1048576,
        baseline: total(f.before) / 1048576,
        baselineName: "before the pass",
        unit: "MB",
      },
    );
  }
  return { rows, figures };
}
