// The Postgres cost of one job (docs/reference/lifecycle.md#state-machine): CPU time the server spends per no-op job from POST to done — creating
// it, handing it over, starting it, recording its outcome, with their events — measured on a server of the
// benchmark's own (no other load counted), beside the floor: the same guarantees written by hand with nothing else
// (bench/baselines/pg-floor.ts). pg_stat_statements breaks the figure down by transition.
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import { startPrivatePostgres } from "../lib/private-postgres";
import type { Row } from "../lib/report";
import { conveyorEnv, prepare } from "../lib/setup";
import { prepareFloor, runFloor } from "../baselines/pg-floor";
import { NOOP_PLUGIN, queueNoopJobs, waitUntilAllDone } from "./worker";

/** Postgres CPU per no-op job measured before issue 22 (8eea5df, this scenario, docs/performance.md). */
export const CPU_PER_JOB_BEFORE_US = Number(process.env.BENCH_PG_BEFORE_US ?? 0);

/** Which transition a statement belongs to, by its text. */
const FAMILIES: [string, RegExp][] = [
  ["create", /unnest\(\$1::uuid\[\], \$2::uuid\[\], \$3::text\[\]/],
  ["hand over", /UPDATE job_queue q SET dispatched_at = now\(\)/],
  // The whole claim, and its usual case's statement of its own (job-machine/start.ts, claimPlain).
  ["start", /unnest\(\$1::uuid\[\], \$2::text\[\]\) AS t\(id, fence\)|started AS \(\s+UPDATE jobs j SET status/],
  ["outcome", /applied AS \(/],
  ["foreign-key checks", /FOR KEY SHARE/],
];

export async function pgCost(port: number, jobs: number, concurrency: number): Promise<Row[]> {
  const server = await startPrivatePostgres();
  try {
    const env = await prepare(server.url);
    let worker: Child | undefined;
    let conveyorUs: number;
    const families = new Map<string, number>();
    try {
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
      await sleep(1000);
      await server.resetStatements();
      const before = server.cpuMicros();
      await queueNoopJobs(env, jobs);
      // Polled once a second: the poll's own cost is counted by pg_stat_statements and taken off below.
      await waitUntilAllDone(env, jobs, 1_000);
      const cpu = server.cpuMicros() - before;
      const statements = await server.statements(60);
      const polls = statements.filter((s) => s.query.startsWith("SELECT count(*) AS n FROM jobs")).reduce((sum, s) => sum + s.totalMs * 1000, 0);
      conveyorUs = (cpu - polls) / jobs;
      for (const statement of statements) {
        // BENCH_PG_STATEMENTS=1 prints what the figure is made of.
        if (process.env.BENCH_PG_STATEMENTS)
          process.stdout.write(`  ${((statement.totalMs * 1000) / jobs).toFixed(1)} µs/job ${statement.calls} calls: ${statement.query.slice(0, 160)}\n`);
        const family = FAMILIES.find(([, pattern]) => pattern.test(statement.query))?.[0];
        if (family) families.set(family, (families.get(family) ?? 0) + statement.totalMs);
      }
    } finally {
      await worker?.stop();
      await env.close();
    }

    const floorUrl = await prepareFloor(server.url);
    const before = server.cpuMicros();
    const floor = await runFloor({ url: floorUrl, jobs, batch: 50, connections: 4 });
    const floorUs = (server.cpuMicros() - before) / jobs;
    await floor.close();

    return [
      {
        scenario: "Postgres cost per job",
        metric: `CPU per no-op job, queued → done (worker concurrency ${concurrency})`,
        conveyor: conveyorUs,
        baseline: floorUs,
        baselineName: "the floor: same writes by hand",
        unit: "µs",
        ...(CPU_PER_JOB_BEFORE_US > 0
          ? { target: `≤ ${Math.round(CPU_PER_JOB_BEFORE_US / 2)} µs (½ of before)`, met: conveyorUs <= CPU_PER_JOB_BEFORE_US / 2 }
          : { target: "≤ 100 µs (docs/reference/lifecycle.md#storage-and-leases)", met: conveyorUs <= 100 }),
      },
      {
        // The ceiling of a whole deployment: workers and API replicas scale out, one Postgres primary does not.
        scenario: "Postgres cost per job",
        metric: "jobs/s one Postgres core carries (10⁶ µs ÷ CPU per job)",
        conveyor: 1e6 / conveyorUs,
        baseline: 1e6 / floorUs,
        baselineName: "the floor: same writes by hand",
        unit: "jobs/s",
      },
      ...[...families].map(([family, totalMs]) => ({
        scenario: "Postgres cost per job",
        metric: `statement time per job: ${family}`,
        conveyor: (totalMs * 1000) / jobs,
        baseline: null,
        baselineName: "",
        unit: "µs",
      })),
    ];
  } finally {
    server.stop();
  }
}
