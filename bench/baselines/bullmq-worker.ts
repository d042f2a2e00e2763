// Baseline for the worker: a raw BullMQ worker whose processor does nothing, with the same concurrency as
// Conveyor's. Measures jobs/s from the first add to the last completion, and its RSS idle and under load.
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { readFileSync } from "node:fs";

const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;

async function main() {
  const total = Number(process.env.JOBS);
  const prefix = process.env.PREFIX!;
  const producer = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("baseline_noop", { connection: producer, prefix });
  let done = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const worker = new Worker("baseline_noop", async () => {}, { connection, prefix, concurrency: Number(process.env.CONCURRENCY) });
  worker.on("completed", () => {
    if (++done === total) finished();
  });
  await worker.waitUntilReady();
  await new Promise((r) => setTimeout(r, 1000));
  const idle = rss();
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
  const started = Date.now();
  for (let i = 0; i < total; i += 1000) {
    await queue.addBulk(
      Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ name: "noop", data: { n: i + j }, opts: { removeOnComplete: true, removeOnFail: true } })),
    );
  }
  await allDone;
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  process.stdout.write(`RESULT ${JSON.stringify({ jobs: total, per_second: total / seconds, rss_idle_mb: idle, rss_peak_mb: peak })}\n`);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  producer.disconnect();
  connection.disconnect();
}
void main();
