// Prometheus metrics of one worker process (SPEC §7), served as /metrics by the health server on
// WORKER_METRICS_PORT. Attempts and re-enqueues are counted as they happen (the runtime's hooks); queue
// depth and the oldest waiting job's age are read from Redis when Prometheus scrapes, with a fixed number
// of commands per served type, so a scrape costs the same however long the queues are.
import type http from "node:http";
import type { Queue } from "bullmq";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { AttemptOutcome } from "./attempt";

/** A scrape never waits longer than this for Redis; the queue gauges are left out instead. */
const QUEUE_READ_TIMEOUT_MS = 2_000;
/** Seconds; from a webhook's round trip to a long PDF or AI summary. */
const ATTEMPT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const QUEUE_STATES = ["waiting", "delayed", "active"] as const;

export type QueueSource = {
  /** The job types this worker serves. */
  types: readonly string[];
  /** The BullMQ queue of a type (the producer connection: fails fast while Redis is away). */
  queue(type: string): Queue;
  /** Attempts running in this process now. */
  active(): number;
};

export type WorkerMetrics = {
  registry: Registry;
  /** The runtime's onAttempt hook. */
  onAttempt(event: { type: string; outcome: AttemptOutcome; durationMs: number }): void;
  /** The runtime's onReenqueued hook. */
  onReenqueued(count: number): void;
  /** Reads queue depth from these queues on each scrape. */
  observeQueues(source: QueueSource): void;
  /** GET /metrics for the health server. */
  serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
};

type QueueStats = { type: string; counts: Record<(typeof QUEUE_STATES)[number], number>; oldestWaitingSeconds: number | null };

/**
 * When the job at the head of the wait list became due: BullMQ keeps its enqueue time and original delay,
 * and for a retry the start of the previous attempt (the time it was promoted from delayed is not kept, so
 * a retried job reads as older than it is, by at most its backoff).
 */
function dueAt(job: { timestamp: number; opts?: { delay?: number }; processedOn?: number }): number {
  return Math.max(job.timestamp + (job.opts?.delay ?? 0), job.processedOn ?? 0);
}

async function readQueue(type: string, queue: Queue, now: number): Promise<QueueStats> {
  const [counts, [oldest]] = await Promise.all([queue.getJobCounts(...QUEUE_STATES), queue.getJobs(["waiting"], 0, 0, true)]);
  return {
    type,
    counts: { waiting: counts.waiting ?? 0, delayed: counts.delayed ?? 0, active: counts.active ?? 0 },
    oldestWaitingSeconds: oldest ? Math.max(0, now - dueAt(oldest)) / 1000 : null,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const attempts = new Counter({
    name: "conveyor_job_attempts_total",
    help: "Attempts by type and outcome: done, retry, failed, cancelled, released (shutdown), discarded (a newer attempt owns the job), skipped (delivery of a finished or cancelled job).",
    labelNames: ["type", "outcome"] as const,
    registers,
  });
  const finished = new Counter({
    name: "conveyor_jobs_finished_total",
    help: "Jobs that reached a final status in this process, by type and status (done or failed).",
    labelNames: ["type", "status"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "conveyor_job_attempt_duration_seconds",
    help: "Time from an attempt's start to its recorded outcome, by type (skipped deliveries excluded).",
    labelNames: ["type"] as const,
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const reenqueued = new Counter({
    name: "conveyor_reconciler_reenqueued_total",
    help: "Live jobs the reconciler put back on their queue because Redis did not hold them.",
    registers,
  });

  let source: QueueSource | undefined;
  let inflight: Promise<QueueStats[] | null> | null = null;
  // Several gauges read one snapshot per scrape: prom-client collects them concurrently, so the first
  // collect starts the read and the others join it.
  const snapshot = () =>
    (inflight ??= (async () => {
      if (!source) return null;
      const now = Date.now();
      const { types, queue } = source;
      return withTimeout(Promise.all(types.map((type) => readQueue(type, queue(type), now))), QUEUE_READ_TIMEOUT_MS).catch(() => null);
    })().finally(() => (inflight = null)));

  new Gauge({
    name: "conveyor_queue_jobs",
    help: "Jobs in each served type's queue by state (waiting, delayed, active), read from Redis at scrape time.",
    labelNames: ["type", "state"] as const,
    registers,
    async collect() {
      this.reset();
      for (const stats of (await snapshot()) ?? []) for (const state of QUEUE_STATES) this.labels(stats.type, state).set(stats.counts[state]);
    },
  });
  new Gauge({
    name: "conveyor_queue_oldest_waiting_seconds",
    help: "Age of the job next in line in each served type's queue (0 when none waits), read at scrape time.",
    labelNames: ["type"] as const,
    registers,
    async collect() {
      this.reset();
      for (const stats of (await snapshot()) ?? []) this.labels(stats.type).set(stats.oldestWaitingSeconds ?? 0);
    },
  });
  new Gauge({
    name: "conveyor_queue_stats_up",
    help: "1 when this scrape could read queue depth from Redis, else 0 (the queue gauges are then absent).",
    registers,
    async collect() {
      this.set(source && (await snapshot()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "conveyor_worker_active_attempts",
    help: "Attempts running in this process now.",
    registers,
    collect() {
      this.set(source?.active() ?? 0);
    },
  });

  return {
    registry,
    onAttempt({ type, outcome, durationMs }) {
      attempts.inc({ type, outcome });
      if (outcome === "done" || outcome === "failed" || outcome === "cancelled") finished.inc({ type, status: outcome });
      if (outcome !== "skipped") duration.observe({ type }, durationMs / 1000);
    },
    onReenqueued(count) {
      reenqueued.inc(count);
    },
    observeQueues(queues) {
      source = queues;
    },
    async serve(_req, res) {
      const body = await registry.metrics();
      res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" }).end(body);
    },
  };
}
