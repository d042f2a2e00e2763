// The TypeScript client's worker under benchmark (bench/scenarios/own-workers.ts): createWorker with a no-op handler
// for TYPE and CONCURRENCY slots, in its own process. Prints a RESULT line once it runs.
import { createWorker } from "@conveyor/client";

const worker = createWorker({
  baseUrl: process.env.CONVEYOR_URL!,
  apiKey: process.env.CONVEYOR_WORKER_KEY!,
  concurrency: Number(process.env.CONCURRENCY ?? 50),
  name: "bench createWorker",
});
worker.task(process.env.TYPE ?? "bench_py_noop", () => null);
void worker.run();
process.stdout.write(`RESULT ${JSON.stringify({ ready: true })}\n`);
process.once("SIGTERM", () => void worker.stop());
