// Baselines for time, priority and fairness: what a raw BullMQ queue does with the same load, in one process
// (producer and a worker with the given concurrency). SCENARIO selects:
//   noisy:    20,000 jobs of org A, then 10 of org B, 20 ms each — B waits first-in-first-out behind A;
//   due:      JOBS jobs delayed to the same instant — lateness of their start (processedOn − due time);
//   priority: a backlog of JOBS priority-1 jobs, then one of priority 10 (BullMQ: lower number first, so 1 vs 10
//             reversed) — how long the urgent one waits to start.
import { Queue, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;

async function main() {
  const scenario = process.env.SCENARIO!;
  const jobs = Number(process.env.JOBS ?? 20_000);
  const prefix = process.env.PREFIX!;
  const producer = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue(`baseline_${scenario}`, { connection: producer, prefix });
  const sleepMs = scenario === "due" ? 0 : 20;
  const concurrency = Number(process.env.CONCURRENCY ?? 10);
  const watched = new Map<string, { added: number; started?: number; finished?: number }>();
  let finishedWatched = 0;
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const expect = scenario === "noisy" ? 10 : scenario === "priority" ? 1 : jobs;
  const worker = new Worker(
    queue.name,
    async (job: Job) => {
      const w = watched.get(job.id!);
      if (w) w.started = Date.now();
      if (sleepMs) await new Promise((r) => setTimeout(r, sleepMs));
      if (w) {
        w.finished = Date.now();
        if (++finishedWatched === expect) resolve();
      }
    },
    { connection, prefix, concurrency, autorun: false },
  );
  const add = async (count: number, watch: boolean, opts: Record<string, unknown> = {}) => {
    for (let i = 0; i < count; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
        name: "b",
        data: {},
        opts: { jobId: `${watch ? "w" : "b"}-${i + j}-${Date.now()}`, removeOnComplete: true, ...opts },
      }));
      const now = Date.now();
      const added = await queue.addBulk(batch);
      if (watch) for (const job of added) watched.set(job.id!, { added: now });
    }
  };
  if (scenario === "noisy") {
    await add(jobs, false);
    void worker.run();
    await add(10, true);
  } else if (scenario === "priority") {
    await add(jobs, false, { priority: 10 });
    void worker.run();
    await new Promise((r) => setTimeout(r, 500));
    await add(1, true, { priority: 1 });
  } else {
    const due = Date.now() + 3_000;
    for (let i = 0; i < jobs; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({
        name: "b",
        data: {},
        opts: { jobId: `w-${i + j}`, delay: due - Date.now(), removeOnComplete: true },
      }));
      for (const job of await queue.addBulk(batch)) watched.set(job.id!, { added: due });
    }
    void worker.run();
  }
  await done;
  const waits = [...watched.values()].map((w) => (scenario === "noisy" ? w.finished! - w.added : w.started! - w.added));
  process.stdout.write(`RESULT ${JSON.stringify({ p99_ms: percentile(waits, 99), p50_ms: percentile(waits, 50) })}\n`);
  await worker.close(true);
  await queue.obliterate({ force: true });
  await queue.close();
  producer.disconnect();
  connection.disconnect();
}
void main();
