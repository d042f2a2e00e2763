// Prometheus metrics of one worker process (docs/reference/operations.md#configuration, docs/reference/high-availability.md#scale-out-and-observability), served as /metrics by the health server on
// WORKER_METRICS_PORT. Attempts and re-enqueues are counted as they happen (the runtime's hooks). The backlog per
// type — due, delayed, running, waiting on limits, and the oldest due job's age — is read from Postgres (the
// dispatcher's queue) when Prometheus scrapes, by the leader only: one replica answers for the deployment, so sums
// over replicas are right and no replica scans the queue for nothing. Nothing carries an organization.
import type http from "node:http";
import type pg from "pg";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { readBacklog, type TypeBacklog } from "@conveyor/db";
import type { AttemptOutcome } from "../executor/attempt";

/** A scrape never waits longer than this for Postgres; the backlog gauges are left out instead. */
const BACKLOG_READ_TIMEOUT_MS = 2_000;
/** Seconds; from a webhook's round trip to a long PDF or AI summary. */
const ATTEMPT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const BACKLOG_STATES = ["due", "delayed", "running", "waiting_on_limits"] as const;

export type BacklogSource = {
  pool: pg.Pool;
  /** Whether this process leads now: only the leader reports the backlog. */
  isLeader(): boolean;
  /** Types reported even when nothing of them is queued (besides those registered in Postgres). */
  knownTypes: readonly string[];
  /** Attempts running in this process now. */
  active(): number;
};

export type WorkerMetrics = {
  registry: Registry;
  /** The runtime's onAttempt hook. */
  onAttempt(event: { type: string; outcome: AttemptOutcome; durationMs: number }): void;
  /** The runtime's onReenqueued hook. */
  onReenqueued(count: number): void;
  /** Reads the backlog from Postgres on each scrape while this process leads. */
  observe(source: BacklogSource): void;
  /** GET /metrics for the health server. */
  serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
};

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

  let source: BacklogSource | undefined;
  let inflight: Promise<TypeBacklog[] | null> | null = null;
  // Several gauges read one snapshot per scrape: prom-client collects them concurrently, so the first
  // collect starts the read and the others join it. Null: not the leader, or Postgres did not answer.
  const snapshot = () =>
    (inflight ??= (async () => {
      if (!source?.isLeader()) return null;
      return readBacklog(source.pool, source.knownTypes, BACKLOG_READ_TIMEOUT_MS).catch(() => null);
    })().finally(() => (inflight = null)));

  new Gauge({
    name: "conveyor_queue_backlog",
    help:
      "Live jobs of each type across the deployment, by state: due (due now, held only by the lack of a worker), delayed (due later), " +
      "running (handed to a worker), waiting_on_limits (due but held by a pause, a rate limit, a concurrency key or an org cap). " +
      "Read from Postgres at scrape time, reported by the leader only.",
    labelNames: ["type", "state"] as const,
    registers,
    async collect() {
      this.reset();
      for (const row of (await snapshot()) ?? []) for (const state of BACKLOG_STATES) this.labels(row.type, state).set(row[state]);
    },
  });
  new Gauge({
    name: "conveyor_queue_oldest_due_seconds",
    help: "Seconds since the oldest due job of each type (not held by limits) fell due, 0 when none: the scheduling delay. Leader only.",
    labelNames: ["type"] as const,
    registers,
    async collect() {
      this.reset();
      for (const row of (await snapshot()) ?? []) this.labels(row.type).set(row.oldest_due_seconds);
    },
  });
  new Gauge({
    name: "conveyor_queue_backlog_up",
    help:
      "1 when this process leads and this scrape read the backlog from Postgres; 0 on the other replicas, and on the leader when Postgres " +
      "did not answer (the backlog gauges are then absent). The deployment is blind to its backlog while the max over replicas is 0.",
    registers,
    async collect() {
      this.set((await snapshot()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "conveyor_worker_leader",
    help: "1 when this worker process is the leader (dispatches, reports the backlog), else 0.",
    registers,
    collect() {
      this.set(source?.isLeader() ? 1 : 0);
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
    observe(backlog) {
      source = backlog;
    },
    async serve(_req, res) {
      const body = await registry.metrics();
      res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" }).end(body);
    },
  };
}
