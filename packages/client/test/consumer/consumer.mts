// A service using the packed @conveyor/client, as package.test.ts installs it in a folder outside the repository.
// The test copies this file as consumer.mts (an ES module) and consumer.cts (CommonJS), compiles both with the
// installed TypeScript and runs them: `node consumer.mjs <base URL> <API key> <label>` prints a JSON report.
import { BUILT_IN_JOB_TYPES, createConveyorClient, newJob, type ConveyorClient, type ConveyorEvent, type Job } from "@conveyor/client";

/** Polls the job until it has finished, as a service waiting for its result would. */
async function settled(conveyor: ConveyorClient, id: string): Promise<Job> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { data, error } = await conveyor.GET("/jobs/{id}", { params: { path: { id } } });
    if (error) throw new Error(`GET /jobs/${id}: ${error.error.code}`);
    if (data.status === "done" || data.status === "failed" || data.status === "cancelled") return data;
    if (Date.now() > deadline) throw new Error(`job ${id} is still ${data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  const [baseUrl, apiKey, label] = process.argv.slice(2);
  if (!baseUrl || !apiKey) throw new Error("usage: consumer <base URL> <API key> <label>");
  const conveyor = createConveyorClient({ baseUrl, apiKey });
  // A built-in type through the typed helper, a plugin type through POST /jobs with newJob's body.
  const notify = await conveyor.enqueue("chat_notify", { channel: "#ops", text: `from the ${label} consumer` }, { max_retries: 1 });
  if (!notify.data) throw new Error(`enqueue: ${notify.response.status} ${JSON.stringify(notify.error)}`);
  const counted = await conveyor.POST("/jobs", { body: newJob("word_count", { text: "to be or not to be" }) });
  if (!counted.data) throw new Error(`POST /jobs: ${counted.response.status} ${JSON.stringify(counted.error)}`);
  const jobs = await Promise.all([settled(conveyor, notify.data.id), settled(conveyor, counted.data.id)]);
  const listed = await conveyor.GET("/jobs", { params: { query: { limit: 100 } } });
  if (!listed.data) throw new Error(`GET /jobs: ${listed.response.status}`);
  // A job's event stream ends by itself after its final event.
  const events: ConveyorEvent[] = [];
  await conveyor.events({ jobId: notify.data.id, signal: AbortSignal.timeout(20_000), onEvent: (event) => events.push(event) });
  const report = {
    label,
    types: BUILT_IN_JOB_TYPES,
    jobs: jobs.map((job) => ({ id: job.id, type: job.type, status: job.status, result: job.result })),
    listed: listed.data.map((job) => job.id),
    events: events.map((event) => ({ type: event.type, job_id: event.job_id })),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
