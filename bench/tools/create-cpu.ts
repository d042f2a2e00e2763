// Diagnostic (not part of `npm run bench`): Postgres CPU per job of the creation statement alone (insertJobs), this
// checkout's against another's (a detached worktree of main, say) on one private Postgres, each on a database migrated
// by its own checkout and one connection of its own, in alternate rounds — the A/B of a change to create.ts that the
// whole-run instrument (cpu-per-job.ts) cannot resolve on a shared machine. Per round: the backend's CPU time
// (perf stat's task-clock, finer than the ticks of /proc) and the whole server's, per job; then the median of each and
// the median of the paired differences (this − other).
//
//   npx tsx --conditions=conveyor-source bench/tools/create-cpu.ts <other checkout> [jobs per round] [rounds] [batch]
//   PAYLOAD='{"…"}' sets every job's payload (default {"n":1}, the no-op bench's); KINDS=plain,dedupe,debounce,key
//   cycles the jobs through those options; EXPERIMENT_SQL runs one statement on this checkout's database first.
import { spawn } from "node:child_process";
import path from "node:path";
import * as here from "@conveyor/db";
import { startPrivatePostgres } from "../lib/private-postgres";
import { prepare } from "../lib/setup";

const other = path.resolve(process.argv[2] ?? path.join(__dirname, "../.."));
const jobs = Number(process.argv[3] ?? 10_000);
const rounds = Number(process.argv[4] ?? 11);
const batch = Number(process.argv[5] ?? 500);
const kinds = (process.env.KINDS ?? "plain").split(",");
const payload = process.env.PAYLOAD ?? '{"n":1}';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** CPU time of process `pid` from now until stop(), in ms (perf stat's task-clock). */
function taskClock(pid: number): { started: Promise<void>; stop(): Promise<number> } {
  const child = spawn("perf", ["stat", "-x", ",", "-e", "task-clock", "-p", String(pid)], { stdio: ["ignore", "ignore", "pipe"] });
  let out = "";
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return {
    // perf needs a moment to attach.
    started: new Promise((resolve) => setTimeout(resolve, 150)),
    async stop() {
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGINT");
      await exited;
      return Number(
        out
          .split("\n")
          .find((line) => line.includes("task-clock"))
          ?.split(",")[0],
      );
    },
  };
}

type Db = typeof here;

async function main(): Promise<void> {
  const otherDb = (await import(path.join(other, "packages/db/src/index.ts"))) as Db;
  const otherSetup = (await import(path.join(other, "bench/lib/setup.ts"))) as { prepare: typeof prepare };
  const postgres = await startPrivatePostgres({ port: process.env.PG_PORT ? Number(process.env.PG_PORT) : undefined });
  const variants: {
    name: string;
    env: Awaited<ReturnType<typeof prepare>>;
    client: import("pg").PoolClient;
    pid: number;
    db: Db;
    runs: { backend: number; server: number }[];
  }[] = [];
  try {
    for (const [name, setup, db] of [
      ["other", otherSetup.prepare, otherDb],
      ["this", prepare, here],
    ] as const) {
      const env = await setup(postgres.url, `conveyor_create_${name}`);
      const client = await env.db.pool.connect();
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      variants.push({ name, env, client, pid, db, runs: [] });
    }
    if (process.env.EXPERIMENT_SQL) await variants[1]!.env.db.pool.query(process.env.EXPERIMENT_SQL);
    const round = async (v: (typeof variants)[number], measured: boolean) => {
      const clock = measured ? taskClock(v.pid) : undefined;
      await clock?.started;
      const before = postgres.cpuMicros();
      for (let i = 0; i < jobs; i += batch) {
        const createdAt = new Date();
        await v.db.insertJobs(
          v.client,
          Array.from({ length: Math.min(batch, jobs - i) }, (_, k) => {
            const kind = kinds[(i + k) % kinds.length];
            return {
              id: v.db.newId(),
              orgId: v.env.orgId,
              type: "bench_noop",
              payloadJson: payload,
              maxRetries: 0,
              createdAt,
              ...(kind === "dedupe" ? { dedupe: { key: `d-${v.db.newId()}`, seconds: 60 } } : {}),
              ...(kind === "debounce" ? { debounceKey: `b-${v.db.newId()}` } : {}),
              ...(kind === "key" ? { concurrencyKey: "k1" } : {}),
            };
          }),
        );
      }
      const server = (postgres.cpuMicros() - before) / jobs;
      const backend = clock ? ((await clock.stop()) * 1000) / jobs : 0;
      return { backend, server };
    };
    // A first round of each, not counted: plans, caches and the tables' first pages.
    for (const v of variants) await round(v, false);
    for (let r = 0; r < rounds; r++) for (const v of r % 2 ? [...variants].reverse() : variants) v.runs.push(await round(v, true));
    console.log(`creation statement, CPU µs per job: ${jobs} jobs a round in batches of ${batch}, ${rounds} rounds alternating; kinds ${kinds.join(",")}`);
    console.log(`other = ${other}`);
    for (const v of variants) {
      for (const key of ["backend", "server"] as const) {
        const values = v.runs.map((run) => run[key]);
        console.log(`${v.name.padEnd(6)} ${key.padEnd(8)} ${median(values).toFixed(1).padStart(6)}   ${values.map((x) => x.toFixed(1)).join(" ")}`);
      }
    }
    const diffs = variants[1]!.runs.map((run, i) => run.backend - variants[0]!.runs[i]!.backend);
    console.log(
      `this − other, backend: median ${median(diffs).toFixed(1)} µs per job, lower in ${diffs.filter((d) => d < 0).length} of ${diffs.length} rounds`,
    );
  } finally {
    for (const v of variants) {
      v.client.release();
      await v.env.close().catch(() => undefined);
    }
    postgres.stop();
  }
}

void main();
