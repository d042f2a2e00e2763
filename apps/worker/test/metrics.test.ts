// The worker's /metrics: attempt outcomes and durations from the runtime's hooks, re-enqueues, and queue depth
// and age read from real BullMQ queues (own Redis prefix) when scraped; a scrape still answers without Redis.
import http from "node:http";
import { JobQueues, createRedis, waitForRedis, type Redis } from "@conveyor/queue";
import { deleteRedisPrefix, startPrivateRedis, testRedisPrefix, TEST_REDIS_URL, metricSample as sample } from "@conveyor/testkit";
import { startHealthServer, type HealthServer } from "../src/runtime/health-server";
import { createWorkerMetrics, type WorkerMetrics } from "../src/runtime/metrics";

function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path }, (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, type: String(res.headers["content-type"]), body }));
      })
      .on("error", reject);
  });
}

describe("worker metrics", () => {
  const prefix = testRedisPrefix();
  let redis: Redis;
  let queues: JobQueues;
  let metrics: WorkerMetrics;
  let server: HealthServer;
  let active = 0;
  const scrape = async () => {
    const res = await get(server.port, "/metrics");
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL, "producer");
    await waitForRedis(redis, 5_000);
    queues = new JobQueues({ connection: redis, prefix });
    metrics = createWorkerMetrics();
    metrics.observeQueues({ types: ["send_email", "webhook"], queue: (type) => queues.queue(type), active: () => active });
    server = await startHealthServer(0, () => true, { "/metrics": metrics.serve });
  });
  afterAll(async () => {
    await server.close();
    await queues.close();
    redis.disconnect();
    await deleteRedisPrefix(prefix);
  });

  it("counts attempts by type and outcome, finished jobs by status, and times every attempt but skipped deliveries", async () => {
    const outcomes = ["done", "done", "retry", "failed", "released", "discarded", "skipped"] as const;
    for (const outcome of outcomes) metrics.onAttempt({ type: "webhook", outcome, durationMs: 1_500 });
    const text = await scrape();
    expect(sample(text, "conveyor_job_attempts_total", { type: "webhook", outcome: "done" })).toBe(2);
    for (const outcome of ["retry", "failed", "released", "discarded", "skipped"]) {
      expect(sample(text, "conveyor_job_attempts_total", { type: "webhook", outcome })).toBe(1);
    }
    expect(sample(text, "conveyor_jobs_finished_total", { type: "webhook", status: "done" })).toBe(2);
    expect(sample(text, "conveyor_jobs_finished_total", { type: "webhook", status: "failed" })).toBe(1);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_count", { type: "webhook" })).toBe(6);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_sum", { type: "webhook" })).toBeCloseTo(9);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_bucket", { type: "webhook", le: "1" })).toBe(0);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_bucket", { type: "webhook", le: "2.5" })).toBe(6);
  });

  it("counts the reconciler's re-enqueues", async () => {
    metrics.onReenqueued(3);
    metrics.onReenqueued(2);
    expect(sample(await scrape(), "conveyor_reconciler_reenqueued_total")).toBe(5);
  });

  it("reads queue depth by state and the oldest waiting job's age at scrape time", async () => {
    const queue = queues.queue("send_email");
    const minuteAgo = Date.now() - 60_000;
    await queue.add("send_email", {}, { jobId: "old", timestamp: minuteAgo, removeOnComplete: true, removeOnFail: true });
    await queues.enqueue([{ id: "new", type: "send_email" }]);
    await queue.add("send_email", {}, { jobId: "later", delay: 3_600_000, removeOnComplete: true, removeOnFail: true });
    active = 4;

    const text = await scrape();
    expect(sample(text, "conveyor_queue_jobs", { type: "send_email", state: "waiting" })).toBe(2);
    expect(sample(text, "conveyor_queue_jobs", { type: "send_email", state: "delayed" })).toBe(1);
    expect(sample(text, "conveyor_queue_jobs", { type: "send_email", state: "active" })).toBe(0);
    expect(sample(text, "conveyor_queue_jobs", { type: "webhook", state: "waiting" })).toBe(0);
    const age = sample(text, "conveyor_queue_oldest_waiting_seconds", { type: "send_email" })!;
    expect(age).toBeGreaterThanOrEqual(60);
    expect(age).toBeLessThan(60 * 60);
    expect(sample(text, "conveyor_queue_oldest_waiting_seconds", { type: "webhook" })).toBe(0);
    expect(sample(text, "conveyor_queue_stats_up")).toBe(1);
    expect(sample(text, "conveyor_worker_active_attempts")).toBe(4);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("still answers when Redis goes away, without queue gauges and with conveyor_queue_stats_up 0", async () => {
    const privateRedis = await startPrivateRedis();
    const connection = createRedis(privateRedis.url, "producer");
    connection.on("error", () => {});
    const ownQueues = new JobQueues({ connection, prefix });
    const own = createWorkerMetrics();
    own.observeQueues({ types: ["send_email"], queue: (type) => ownQueues.queue(type), active: () => 0 });
    let stopped = false;
    try {
      await waitForRedis(connection, 5_000);
      expect(sample(await own.registry.metrics(), "conveyor_queue_stats_up")).toBe(1);
      await privateRedis.stop();
      stopped = true;
      const text = await own.registry.metrics();
      expect(sample(text, "conveyor_queue_stats_up")).toBe(0);
      expect(sample(text, "conveyor_queue_jobs", { type: "send_email", state: "waiting" })).toBeUndefined();
      expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    } finally {
      await ownQueues.close().catch(() => {});
      connection.disconnect();
      // A second stop() of the same server would wait for an exit that already happened.
      if (!stopped) await privateRedis.stop();
    }
  });

  it("serves /healthz and /metrics on the same port, and nothing else", async () => {
    expect((await get(server.port, "/healthz")).status).toBe(200);
    expect((await get(server.port, "/nope")).status).toBe(404);
  });
});
