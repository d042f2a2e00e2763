// Baseline for a lone job on an idle system: raw BullMQ, one job added at a time to an idle no-op worker (separate
// process), latency = the processor's start − the moment before the add, both read from this host's clock.
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";

async function main() {
  const prefix = process.env.PREFIX!;
  const jobs = Number(process.env.JOBS);
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const producer = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("baseline_lone", { connection: producer, prefix });
  let started: (at: number) => void = () => {};
  const worker = new Worker(
    "baseline_lone",
    async () => {
      started(Date.now());
    },
    { connection, prefix, concurrency: 10 },
  );
  await worker.waitUntilReady();
  await new Promise((r) => setTimeout(r, 1000));
  const latencies: number[] = [];
  for (let i = 0; i < jobs; i++) {
    const at = new Promise<number>((resolve) => (started = resolve));
    const sent = Date.now();
    await queue.add("lone", {}, { removeOnComplete: true });
    latencies.push((await at) - sent);
    // Idle between jobs, as a lone job finds the system.
    await new Promise((r) => setTimeout(r, 20));
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  process.stdout.write(`RESULT ${JSON.stringify({ p50_ms: pct(0.5), p99_ms: pct(0.99) })}\n`);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  producer.disconnect();
  connection.disconnect();
}

void main();
