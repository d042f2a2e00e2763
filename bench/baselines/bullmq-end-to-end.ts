// Baseline for end to end: raw BullMQ, a producer adding at a fixed rate and a no-op worker (separate
// process), latency = completion time − add time, from BullMQ's own timestamps.
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";

async function main() {
  const prefix = process.env.PREFIX!;
  const rate = Number(process.env.RATE);
  const durationMs = Number(process.env.DURATION_MS);
  const name = `baseline_e2e_${rate}`;
  if (process.env.ROLE === "worker") {
    const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    new Worker(name, async () => {}, { connection, prefix, concurrency: Number(process.env.CONCURRENCY) });
    process.stdout.write("RESULT {}\n");
    return;
  }
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection, prefix });
  const ids: string[] = [];
  const started = Date.now();
  let sent = 0;
  // Adds in 10 ms ticks to keep the rate smooth.
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(Math.floor(((Date.now() - started) / 1000) * rate), Math.floor((durationMs / 1000) * rate));
      for (; sent < due; sent++) void queue.add("e2e", {}, { removeOnComplete: false }).then((job) => ids.push(job.id!));
      if (Date.now() - started >= durationMs) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  const deadline = Date.now() + 30_000;
  while ((await queue.getCompletedCount()) < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const latencies: number[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const jobs = await Promise.all(ids.slice(i, i + 500).map((id) => queue.getJob(id)));
    for (const job of jobs) if (job?.finishedOn) latencies.push(job.finishedOn - job.timestamp);
  }
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  process.stdout.write(`RESULT ${JSON.stringify({ sent, completed: latencies.length, p50_ms: q(0.5), p99_ms: q(0.99) })}\n`);
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
}
void main();
