// Diagnostic (not part of `npm run bench`): Postgres CPU per job of the job machine's three usual transitions alone —
// create (insertJobs, batches of 500), claim (claimJobs, batches of 50) and success (writeOutcomes without log lines,
// batches of 50) — called in this process, without worker, Redis or dispatcher, so a run is the same work every time.
// An A/B of SQL the whole-run instrument (cpu-per-job.ts) cannot resolve on a shared machine, where its rounds
// scatter by ±25 µs: two databases on one private Postgres, "base" as migrated and "experiment" with EXPERIMENT_SQL
// applied, measured in alternate rounds; the server's CPU time (every one of its processes) per job, per phase.
//
//   EXPERIMENT_SQL="…" npx tsx --conditions=conveyor-source bench/tools/transition-cpu.ts [jobs per round] [rounds]
//   PG_PORT=n runs the private Postgres on that port.
import { claimJobs, insertJobs, newId, writeOutcomes } from "@conveyor/db";
import { startPrivatePostgres } from "../lib/private-postgres";
import { prepare, type BenchEnv } from "../lib/setup";

const jobs = Number(process.argv[2] ?? 5_000);
const rounds = Number(process.argv[3] ?? 7);
const phases = ["create", "claim", "success"] as const;
type Phase = (typeof phases)[number];

const chunks = <T>(items: T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function round(env: BenchEnv, cpu: () => number): Promise<Record<Phase | "total", number>> {
  const ids = Array.from({ length: jobs }, () => newId());
  const spent = {} as Record<Phase | "total", number>;
  const phase = async (name: Phase, work: () => Promise<void>) => {
    const before = cpu();
    await work();
    spent[name] = (cpu() - before) / jobs;
  };
  await phase("create", async () => {
    for (const batch of chunks(ids, 500))
      await insertJobs(
        env.db.pool,
        batch.map((id) => ({ id, orgId: env.orgId, type: "noop", payloadJson: "{}", maxRetries: 0, createdAt: new Date() })),
      );
  });
  await phase("claim", async () => {
    for (const batch of chunks(ids, 50))
      await claimJobs(
        env.db.pool,
        batch.map((id) => ({ id, fence: `f-${id}` })),
      );
  });
  await phase("success", async () => {
    for (const batch of chunks(ids, 50))
      await writeOutcomes(
        env.db.pool,
        [],
        batch.map((id) => ({ id, fence: `f-${id}`, status: "done" as const, retries: 0, result: null, error: null, runAt: null })),
      );
  });
  spent.total = spent.create + spent.claim + spent.success;
  return spent;
}

async function main(): Promise<void> {
  const postgres = await startPrivatePostgres({ port: process.env.PG_PORT ? Number(process.env.PG_PORT) : undefined });
  const variants: { name: string; env: BenchEnv; runs: Record<Phase | "total", number>[] }[] = [];
  try {
    for (const name of ["base", "experiment"]) {
      const env = await prepare(postgres.url, `conveyor_transition_${name}`);
      if (name === "experiment" && process.env.EXPERIMENT_SQL) await env.db.pool.query(process.env.EXPERIMENT_SQL);
      variants.push({ name, env, runs: [] });
    }
    // A first round of each, not counted: plans, caches and the tables' first pages.
    for (const v of variants) await round(v.env, () => postgres.cpuMicros());
    for (let r = 0; r < rounds; r++) {
      for (const v of r % 2 ? [...variants].reverse() : variants) v.runs.push(await round(v.env, () => postgres.cpuMicros()));
    }
    console.log(`Postgres CPU µs per job, ${jobs} jobs a round, ${rounds} rounds alternating (median; each round)`);
    for (const v of variants) {
      for (const key of [...phases, "total"] as const) {
        const values = v.runs.map((run) => run[key]);
        console.log(`${v.name.padEnd(10)} ${key.padEnd(8)} ${median(values).toFixed(1).padStart(6)}   ${values.map((x) => x.toFixed(0)).join(" ")}`);
      }
    }
  } finally {
    for (const v of variants) await v.env.close().catch(() => undefined);
    postgres.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
