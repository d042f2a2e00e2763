// Baseline for POST /jobs/batch: raw BullMQ `add` with 64 in flight for DURATION_MS. Prints adds/s.
import { Queue } from "bullmq";
import { Redis } from "ioredis";

async function main() {
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = new Queue("baseline_add", { connection, prefix: process.env.PREFIX! });
  await queue.waitUntilReady();
  const until = Date.now() + Number(process.env.DURATION_MS);
  let added = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (Date.now() < until) {
        await queue.add("baseline", { url: "https://example.com/hook", payload: { n: added } }, { removeOnComplete: true, removeOnFail: true });
        added++;
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`RESULT ${JSON.stringify({ adds: added, per_second: added / seconds })}\n`);
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
}
void main();
